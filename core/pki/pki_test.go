package pki

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	if b == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestIssueVerifiesForServerAndClient(t *testing.T) {
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	caPEM, caKey, err := NewCA("rivet test CA", 10*365*24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := Issue(caPEM, caKey, []string{"cond1.example.com", "10.0.0.21", "cond1"}, 365*24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(keyPEM), "BEGIN PRIVATE KEY") {
		t.Fatalf("key is not PKCS #8 PEM: %.40s", keyPEM)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	leaf := parse(t, certPEM)
	at := now.Add(time.Hour)
	for name, opts := range map[string]x509.VerifyOptions{
		"server by DNS name":   {Roots: roots, DNSName: "cond1.example.com", CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		"server by short name": {Roots: roots, DNSName: "cond1", CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		"server by IP":         {Roots: roots, DNSName: "10.0.0.21", CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		"client":               {Roots: roots, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		"a clock 1 min late":   {Roots: roots, CurrentTime: now.Add(-time.Minute), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	} {
		if _, err := leaf.Verify(opts); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, opts := range map[string]x509.VerifyOptions{
		"another name":      {Roots: roots, DNSName: "cond2.example.com", CurrentTime: at},
		"expired":           {Roots: roots, CurrentTime: now.Add(366 * 24 * time.Hour)},
		"another CA's pool": {Roots: x509.NewCertPool(), CurrentTime: at},
	} {
		if _, err := leaf.Verify(opts); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	// The CA signs leaves only.
	ca := parse(t, caPEM)
	if !ca.IsCA || !ca.MaxPathLenZero || ca.MaxPathLen != 0 {
		t.Errorf("CA constraints: IsCA %v MaxPathLen %d zero %v", ca.IsCA, ca.MaxPathLen, ca.MaxPathLenZero)
	}
	if leaf.IsCA {
		t.Error("issued certificate is a CA")
	}
}

func TestIssueRefuses(t *testing.T) {
	now := time.Now()
	caPEM, caKey, err := NewCA("ca", 24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	otherPEM, otherKey, err := NewCA("other", 24*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	leafPEM, leafKey, err := Issue(caPEM, caKey, []string{"h"}, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		cert, key []byte
		hosts     []string
		validity  time.Duration
		want      string
	}{
		"no hosts":             {caPEM, caKey, nil, time.Hour, "no host name"},
		"outlives its CA":      {caPEM, caKey, []string{"h"}, 48 * time.Hour, "outlive its CA"},
		"key of another CA":    {caPEM, otherKey, []string{"h"}, time.Hour, "does not match"},
		"not a CA":             {leafPEM, leafKey, []string{"h"}, time.Hour, "not a CA"},
		"not PEM":              {[]byte("x"), caKey, []string{"h"}, time.Hour, "no PEM CERTIFICATE"},
		"key is a certificate": {caPEM, otherPEM, []string{"h"}, time.Hour, "no PEM PRIVATE KEY"},
	} {
		_, _, err := Issue(tc.cert, tc.key, tc.hosts, tc.validity, now)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
