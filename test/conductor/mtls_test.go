package conductor

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Mutual TLS from `rivet tls init` and `rivet tls issue`: a conductor with
// require_client_certificate and no other authentication serves an API
// that presents its certificate, and no client without one gets past the
// TLS handshake.
func TestJSONRPCMutualTLS(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"tls", "init", "--dir", dir}, {"tls", "issue", "--dir", dir, "127.0.0.1"},
		{"tls", "issue", "--dir", dir, "rivet-api"}} {
		if out, err := exec.Command(rivetBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("rivet %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	tlsEnv := func(host string) []string {
		return []string{"RIVET_JSON_RPC_USE_SSL=true", "RIVET_JSON_RPC_CAFILE=" + filepath.Join(dir, "ca.pem"),
			"RIVET_JSON_RPC_CERT_FILE=" + filepath.Join(dir, host+".pem"), "RIVET_JSON_RPC_KEY_FILE=" + filepath.Join(dir, host+"-key.pem"),
			"RIVET_JSON_RPC_REQUIRE_CLIENT_CERTIFICATE=true", "RIVET_JSON_RPC_AUTH_STRATEGY=noauth"}
	}
	p := c.startEnv("a", tlsEnv("127.0.0.1")...)
	apiPort := freePort(t)
	c.startAPI(apiPort, append(tlsEnv("rivet-api"), "RIVET_DEFAULT_HOST=rivet-api")...)

	base := "http://127.0.0.1:" + strconv.Itoa(apiPort)
	if status, body := mustREST(t, base, http.MethodPost, "/v1/nodes", `{"driver":"fake-hardware","name":"mtls","driver_info":{"fake_password":"`+bmcPassword+`"}}`); status != http.StatusCreated {
		t.Fatalf("POST /v1/nodes through the API (its certificate): %d %s", status, body)
	}

	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	apiCert, err := tls.LoadX509KeyPair(filepath.Join(dir, "rivet-api.pem"), filepath.Join(dir, "rivet-api-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	// A certificate from another CA: what an attacker can make.
	otherDir := t.TempDir()
	for _, args := range [][]string{{"tls", "init", "--dir", otherDir}, {"tls", "issue", "--dir", otherDir, "rivet-api"}} {
		if out, err := exec.Command(rivetBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("rivet %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	foreign, err := tls.LoadX509KeyPair(filepath.Join(otherDir, "rivet-api.pem"), filepath.Join(otherDir, "rivet-api-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","method":"create_node","params":{},"id":1}`)
	for name, tc := range map[string]struct {
		certs  []tls.Certificate
		wantOK bool
	}{
		"no client certificate":               {},
		"a certificate of another CA":         {certs: []tls.Certificate{foreign}},
		"the API's certificate (the control)": {certs: []tls.Certificate{apiCert}, wantOK: true},
	} {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: tc.certs, MinVersion: tls.VersionTLS12}}}
		res, err := client.Post("https://"+p.name+"/", "application/json", bytes.NewReader(body))
		if tc.wantOK {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			res.Body.Close()
			continue
		}
		if err == nil {
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			t.Errorf("%s: the conductor answered HTTP %d: %s", name, res.StatusCode, out)
		}
	}
}
