package conductor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/httplimit"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/rpc/jsonrpc"
)

// JSONRPCOptions configures the conductor's JSON-RPC listener ([json_rpc]).
type JSONRPCOptions struct {
	// HostIP and Port are where to listen; Port 0 picks a free port.
	HostIP string
	Port   int
	// CertFile and KeyFile enable TLS (at least TLS 1.2) when both are set.
	CertFile, KeyFile string
	// Users enables http_basic authentication when non-nil.
	Users *htpasswd.File
	// ClientCAs, with CertFile and KeyFile, enables mutual TLS: only
	// clients presenting a certificate signed by one of them connect.
	ClientCAs *x509.CertPool
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the request line and headers ([json_rpc]
	// max_header_size); 0 means 64 KiB, the REST API's default too.
	MaxHeaderBytes int
	// BodyTimeout bounds the time a request body may take to arrive
	// ([json_rpc] body_timeout, httplimit.BodyDeadline); 0 means 60 s.
	BodyTimeout time.Duration
}

// jsonRPCIdleTimeout closes keep-alive connections idle this long: longer
// than the 90 s the JSON-RPC client keeps them, so the client is the one
// that closes an idle connection, and one it reuses is seldom closing.
const jsonRPCIdleTimeout = 120 * time.Second

type jsonRPCListener struct {
	ln  net.Listener
	srv *http.Server
	tls bool
}

// newJSONRPCListener binds the listener now, so a busy port fails Start
// with a clear message before the conductor registers.
func newJSONRPCListener(server *rpc.Server, o JSONRPCOptions, log *slog.Logger) (*jsonRPCListener, error) {
	addr := net.JoinHostPort(o.HostIP, strconv.Itoa(o.Port))
	// config.ValidateService stops `rivet conductor` before this with the
	// options to set; this guards every other caller.
	mutualTLS := o.ClientCAs != nil && o.CertFile != "" && o.KeyFile != ""
	if o.Users == nil && !mutualTLS && !config.Loopback(o.HostIP) {
		return nil, fmt.Errorf("conductor: JSON-RPC on %s without authentication: refused, set [json_rpc] auth_strategy = http_basic or a loopback [json_rpc] host_ip", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("conductor: JSON-RPC listen on %s: %w", addr, err)
	}
	h := jsonrpc.NewHTTPHandler(server, jsonrpc.HTTPHandlerOptions{Users: o.Users, MaxBodyBytes: o.MaxBodyBytes, Log: log})
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 60 * time.Second
	}
	srv := &http.Server{Handler: httplimit.BodyDeadline(h, o.BodyTimeout), ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: jsonRPCIdleTimeout, MaxHeaderBytes: o.MaxHeaderBytes,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	l := &jsonRPCListener{ln: ln, srv: srv}
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("conductor: JSON-RPC TLS certificate %s / key %s: %w", o.CertFile, o.KeyFile, err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if o.ClientCAs != nil {
			srv.TLSConfig.ClientCAs = o.ClientCAs
			srv.TLSConfig.ClientAuth = tls.RequireAndVerifyClientCert
		}
		l.tls = true
	}
	return l, nil
}

func (l *jsonRPCListener) addr() string { return l.ln.Addr().String() }

func (l *jsonRPCListener) serve() error {
	if l.tls {
		return l.srv.ServeTLS(l.ln, "", "")
	}
	return l.srv.Serve(l.ln)
}

// drain turns keep-alives off while the listener still accepts: idle
// connections close now and every answer carries Connection: close, so a
// client that loses the race with a closing connection resends on a fresh
// one that still reaches this conductor (which answers TemporaryFailure
// while draining, and the Router moves the call on) rather than on a
// listener that is already gone. When this conductor had already read the
// call on the closed connection, the resend carries the same call id and
// gets that call's reply from the JSON-RPC handler's reply cache instead
// (jsonrpc.CallIDHeader).
func (l *jsonRPCListener) drain() { l.srv.SetKeepAlivesEnabled(false) }

// lingerUntil keeps the listener accepting, answering every call
// TemporaryFailure, until deadline: the moment every caller's hash ring,
// built before this conductor went offline, has expired
// (hash_ring_reset_interval). Closing the listener earlier would reset
// the connections still in its accept queue after their request was
// written, which a caller cannot tell from a conductor that died while
// running the call, so it could not safely resend it; a refusal it can.
func (l *jsonRPCListener) lingerUntil(ctx context.Context, deadline time.Time, log *slog.Logger) {
	d := time.Until(deadline)
	if d <= 0 {
		return
	}
	log.Info("JSON-RPC listener stays open, refusing calls, until callers' hash rings expire", "for", d.Round(time.Millisecond))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// shutdown stops accepting and waits for requests in progress.
func (l *jsonRPCListener) shutdown(ctx context.Context) error {
	err := l.srv.Shutdown(ctx)
	_ = l.ln.Close() // in case serve never ran
	return err
}
