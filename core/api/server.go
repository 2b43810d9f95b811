package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rivetmetal/rivet/core/httplimit"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	// TLS, when set, serves HTTPS with it (certificates loaded by the caller).
	TLS *tls.Config
	// ShutdownTimeout bounds the drain of in-flight requests once ctx ends
	// ([api] graceful_shutdown_timeout).
	ShutdownTimeout time.Duration
	// Logger receives connection-level errors (TLS handshakes, …); nil
	// discards them.
	Logger *slog.Logger
	// ShutdownDelay ([api] shutdown_delay) is how long, once ctx ends, the
	// API keeps serving with /healthz answering 503 and keep-alives off
	// before it stops accepting, so a load balancer's health check takes it
	// out of rotation while it still answers whatever arrives.
	ShutdownDelay time.Duration
	// MaxHeaderBytes bounds the request line and headers ([api]
	// max_header_size); larger requests get 431. 0 means
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int

	// BodyTimeout ([api] body_timeout) is how long a client may take to
	// send a request body once its headers are in; a slower body fails
	// with 408 and its connection is closed. 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long; 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConnections ([api] max_connections) caps the connections open at
	// once (httplimit.Listener); 0 means no cap.
	MaxConnections int

	// delay is time.After; tests replace it to end the shutdown delay
	// when they choose.
	delay func(time.Duration) <-chan time.Time
}

// DefaultBodyTimeout is the body deadline when ServeOptions sets none: a
// 1 MiB body (the default body limit) arrives in it at 17 KiB/s.
const DefaultBodyTimeout = 60 * time.Second

// DefaultIdleTimeout closes keep-alive connections idle this long, longer
// than the 90 s clients (Go's and Python's pools) keep them, so a client
// rarely reuses a connection the server is closing.
const DefaultIdleTimeout = 120 * time.Second

// DefaultMaxHeaderBytes is the header limit when ServeOptions sets none:
// room for large tokens, far below net/http's 1 MiB.
const DefaultMaxHeaderBytes = 64 << 10

// Serve serves h on ln (HTTP/1.1 with keep-alive, optionally TLS) until ctx
// ends, then drains for ShutdownDelay (see ServeOptions), stops accepting,
// lets in-flight requests finish within ShutdownTimeout and closes what
// remains. It answers GET /healthz itself, ahead of h (HealthPath).
func Serve(ctx context.Context, ln net.Listener, h http.Handler, o ServeOptions) error {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.delay == nil {
		o.delay = time.After
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	var draining atomic.Bool
	srv := &http.Server{
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		Handler:           httplimit.BodyDeadline(withHealth(h, &draining), o.BodyTimeout),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       o.IdleTimeout,
		TLSConfig:         o.TLS,
		// Ironic's clients speak HTTP/1.1; no h2 upgrade.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	ln = httplimit.Listener(ln, o.MaxConnections)
	if o.TLS != nil {
		ln = tls.NewListener(ln, o.TLS)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("api: serve: %w", err)
	case <-ctx.Done():
	}
	// Keep-alives go first: every answer from now on carries Connection:
	// close, so clients reconnect (through the load balancer, elsewhere)
	// instead of reusing a connection that Shutdown will close.
	srv.SetKeepAlivesEnabled(false)
	draining.Store(true)
	if o.ShutdownDelay > 0 {
		logger.Info("api draining: /healthz answers 503 until the listener closes", "shutdown_delay", o.ShutdownDelay)
		<-o.delay(o.ShutdownDelay)
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
		err = fmt.Errorf("api: in-flight requests still running after %s were cut off", o.ShutdownTimeout)
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// HealthPath is the load balancers' health check: 200 while the API takes
// new requests, 503 once it drains. It is no Ironic path, so it needs no
// authentication or microversion, and it skips h's access log, metrics
// and rate limit, which health checks every few seconds would swamp.
const HealthPath = "/healthz"

func withHealth(h http.Handler, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != HealthPath {
			h.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeRoutingError(w, http.StatusMethodNotAllowed, "Only GET and HEAD are allowed on "+HealthPath+".")
			return
		}
		status, body := http.StatusOK, `{"status":"ok"}`
		if draining.Load() {
			status, body = http.StatusServiceUnavailable, `{"status":"draining"}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, body+"\n")
		}
	})
}
