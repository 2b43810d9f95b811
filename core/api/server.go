package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
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
	// MaxHeaderBytes bounds the request line and headers ([api]
	// max_header_size); larger requests get 431. 0 means
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int
}

// DefaultMaxHeaderBytes is the header limit when ServeOptions sets none:
// room for large tokens, far below net/http's 1 MiB.
const DefaultMaxHeaderBytes = 64 << 10

// Serve serves h on ln (HTTP/1.1 with keep-alive, optionally TLS) until ctx
// ends, then stops accepting, lets in-flight requests finish within
// ShutdownTimeout and closes what remains.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, o ServeOptions) error {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	srv := &http.Server{
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		TLSConfig:         o.TLS,
		// Ironic's clients speak HTTP/1.1; no h2 upgrade.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
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
