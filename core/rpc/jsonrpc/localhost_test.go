package jsonrpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"testing"

	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

// TestLocalConductorDialedAtLocalAddr: a conductor registered under the
// caller's own [DEFAULT] host is dialed at LocalAddr, whatever the name
// resolves to (here: nothing), over plain http and over TLS, which still
// verifies the certificate against the registered name; when nothing
// listens there, at the name.
func TestLocalConductorDialedAtLocalAddr(t *testing.T) {
	const local = "rivet-local-conductor.invalid" // never resolves (RFC 6761)
	plain := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	defer plain.Close()
	secure := httptest.NewUnstartedServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	secure.Config.ErrorLog = log.New(io.Discard, "", 0)
	secure.StartTLS()
	defer secure.Close()
	pool := x509.NewCertPool()
	pool.AddCert(secure.Certificate())
	port := func(s *httptest.Server) string { _, p, _ := net.SplitHostPort(s.Listener.Addr().String()); return p }

	tests := map[string]struct {
		opts   HTTPTransportOptions
		host   string
		wantOK bool
	}{
		"plain http, own name": {opts: HTTPTransportOptions{LocalHost: local, LocalAddr: "127.0.0.1"},
			host: local + ":" + port(plain), wantOK: true},
		"own name matches without case": {opts: HTTPTransportOptions{LocalHost: "Rivet-Local-Conductor.invalid", LocalAddr: "127.0.0.1"},
			host: local + ":" + port(plain), wantOK: true},
		// The local conductor listens elsewhere than LocalAddr (its own
		// configuration sets another host_ip): the name is dialed next.
		"nothing at the local address, plain http": {opts: HTTPTransportOptions{LocalHost: "127.0.0.1", LocalAddr: "127.0.0.2"},
			host: "127.0.0.1:" + port(plain), wantOK: true},
		"nothing at the local address, TLS": {opts: HTTPTransportOptions{LocalHost: "127.0.0.1", LocalAddr: "127.0.0.2",
			TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, host: "127.0.0.1:" + port(secure), wantOK: true},
		"another host's name is dialed as it is": {opts: HTTPTransportOptions{LocalHost: "other.invalid", LocalAddr: "127.0.0.1"},
			host: local + ":" + port(plain)},
		"no local host configured": {opts: HTTPTransportOptions{}, host: local + ":" + port(plain)},
		// httptest's certificate names example.com: the dial moves to
		// loopback, the verification still uses the registered name.
		"TLS, own name, certificate checked against it": {opts: HTTPTransportOptions{LocalHost: "example.com", LocalAddr: "127.0.0.1",
			TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, host: "example.com:" + port(secure), wantOK: true},
		"TLS, a name the certificate does not hold": {opts: HTTPTransportOptions{LocalHost: local, LocalAddr: "127.0.0.1",
			TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, host: local + ":" + port(secure)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, NewHTTPTransport(tc.opts))
			_, err := c.Call(context.Background(), tc.host, "power", map[string]any{"node_id": "n1"})
			if tc.wantOK && err != nil {
				t.Fatalf("call to %s: %v", tc.host, err)
			}
			if !tc.wantOK && err == nil {
				t.Fatalf("call to %s reached a conductor", tc.host)
			}
		})
	}
	// A name that does not resolve is unreachable, so safe to retry elsewhere.
	_, err := NewHTTPTransport(HTTPTransportOptions{}).Send(context.Background(), local+":"+port(plain), &rpc.Request{Method: "power", Version: "1.0"})
	if !errors.Is(err, rpc.ErrUnreachable) {
		t.Fatalf("unresolvable name: %v, want ErrUnreachable", err)
	}
}

func TestLocalDialAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1", "::1": "::1", "10.0.0.5": "10.0.0.5", "fd00::5": "fd00::5",
	} {
		if got := LocalDialAddr(in); got != want {
			t.Errorf("LocalDialAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
