package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLSInitAndIssue: the CA and a host's certificate land in --dir with
// private keys 0600, the certificate verifies for the host's name against
// the CA, and nothing existing is ever replaced.
func TestTLSInitAndIssue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	if code, _, errOut := runCLI(t, "tls", "issue", "--dir", dir, "cond1"); code != 1 || !strings.Contains(errOut, "run rivet tls init first") {
		t.Fatalf("issue before init: exit %d %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, "tls", "init", "--dir", dir); code != 0 || !strings.Contains(out, "CA written") {
		t.Fatalf("init: exit %d %s %s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "tls", "init", "--dir", dir); code != 1 || !strings.Contains(errOut, "exists: refusing to replace it") {
		t.Fatalf("second init: exit %d %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "tls", "issue", "--dir", dir, "cond1.example.com", "10.0.0.21")
	if code != 0 || !strings.Contains(out, "require_client_certificate = true") {
		t.Fatalf("issue: exit %d %s %s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "tls", "issue", "--dir", dir, "cond1.example.com"); code != 1 || !strings.Contains(errOut, "refusing to replace") {
		t.Fatalf("second issue: exit %d %s", code, errOut)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no host":     {args: []string{"tls", "issue", "--dir", dir}, want: "give the host's [DEFAULT] host name"},
		"a path":      {args: []string{"tls", "issue", "--dir", dir, "../x"}, want: "is not a host name"},
		"zero days":   {args: []string{"tls", "issue", "--dir", dir, "--days", "0", "host1"}, want: "--days must be at least 1"},
		"beyond a CA": {args: []string{"tls", "issue", "--dir", dir, "--days", "4000", "host1"}, want: "outlive its CA"},
	} {
		if code, _, errOut := runCLI(t, tc.args...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d %s, want %q", name, code, errOut, tc.want)
		}
	}
	for name, mode := range map[string]os.FileMode{"ca.pem": 0o644, "ca-key.pem": 0o600, "cond1.example.com.pem": 0o644, "cond1.example.com-key.pem": 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "cond1.example.com.pem"), filepath.Join(dir, "cond1.example.com-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"cond1.example.com", "10.0.0.21"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
}
