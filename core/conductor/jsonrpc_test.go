package conductor

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/rpc/jsonrpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "conductor"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// The JSON-RPC listener serves the RPC API over TLS with http_basic: the
// right credentials reach the handlers, wrong ones are refused.
func TestJSONRPCListenerTLSAndBasicAuth(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	users := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(users, []byte("rivet:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := htpasswd.Load(users)
	if err != nil {
		t.Fatal(err)
	}
	store := newStore(t, dbtest.Open(t, db.SQLite))
	pinner := release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})
	svc, err := New(testConfig("cond-tls"), Deps{Store: store, Drivers: StaticDrivers{fake.HardwareType: fake.New(nil)}, Pinner: pinner,
		Logger: testLogger(t), JSONRPC: &JSONRPCOptions{HostIP: "127.0.0.1", CertFile: certFile, KeyFile: keyFile, Users: file, MaxBodyBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Stop(ctx)
	call := func(password string) error {
		tr := jsonrpc.NewHTTPTransport(jsonrpc.HTTPTransportOptions{TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			Username: "rivet", Password: password, Timeout: 5 * time.Second})
		c := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
			rpc.ObjectCodecFor(store.Registry(), pinner), tr)
		_, err := c.Call(ctx, svc.Addr(), "get_driver_properties", map[string]any{"driver_name": "fake-hardware"})
		return err
	}
	if err := call("s3cret"); err != nil {
		t.Fatalf("call with the right password over TLS: %v", err)
	}
	if err := call("wrong"); err == nil {
		t.Fatal("call with a wrong password succeeded")
	}
}

// TestJSONRPCListenerClosesTricklingBody: a call whose body has not
// arrived within [json_rpc] body_timeout gets its connection closed; the
// server had no body or idle deadline before.
func TestJSONRPCListenerClosesTricklingBody(t *testing.T) {
	srv := rpc.NewServer(rpc.ConductorMethods(), nil, testLogger(t), context.Background())
	l, err := newJSONRPCListener(srv, JSONRPCOptions{HostIP: "127.0.0.1", MaxBodyBytes: 1 << 20,
		BodyTimeout: 100 * time.Millisecond}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = l.serve() }()
	defer l.shutdown(context.Background())
	if l.srv.IdleTimeout <= 0 {
		t.Error("idle keep-alive connections are never closed")
	}
	c, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a guard against hanging, not a measure
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection still open after the body deadline (status %d): read gave %v", resp.StatusCode, err)
	}
}
