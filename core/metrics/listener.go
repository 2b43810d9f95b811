// Package metrics serves a service's Prometheus registry on a listener of
// its own ([metrics] api_listen / conductor_listen), apart from the REST
// API and JSON-RPC listeners: no authentication (as exporters are),
// loopback unless the admin allows more.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CheckAddress refuses a listen address that is not loopback unless
// allowRemote: the listener has no authentication. option names the
// setting in the error.
func CheckAddress(option, addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port: %w", option, addr, err)
	}
	if allowRemote || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%s = %s listens beyond this host, and metrics have no authentication: "+
		"use a loopback address (127.0.0.1 or ::1), or set [metrics] allow_remote = true to "+
		"expose them to your monitoring network", option, addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server serves one registry at /metrics.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	log  *slog.Logger
	done chan struct{}
}

// Listen binds addr (checked with CheckAddress under option's name) and
// returns a Server not serving yet.
func Listen(option, addr string, allowRemote bool, reg prometheus.Gatherer, log *slog.Logger) (*Server, error) {
	if err := CheckAddress(option, addr, allowRemote); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", option, err)
	}
	mux := http.NewServeMux()
	// A collector that fails (the node counts when the database is
	// unreachable) is logged and left out; the other families still serve.
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogErrors{log},
		ErrorHandling: promhttp.ContinueOnError}))
	return &Server{ln: ln, log: log, done: make(chan struct{}), srv: &http.Server{Handler: mux,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute,
		MaxHeaderBytes: 16 << 10}}, nil
}

// Addr is the bound address (a ":0" port resolved).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Close, in the background.
func (s *Server) Serve() {
	s.log.Info("serving Prometheus metrics", "address", "http://"+s.Addr()+"/metrics")
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics listener failed", "error", err)
		}
	}()
}

// Close stops the listener, giving scrapes in progress up to ctx.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	select {
	case <-s.done:
	default:
		_ = s.ln.Close()
	}
	return err
}

// slogErrors adapts promhttp's error log to slog.
type slogErrors struct{ log *slog.Logger }

func (l slogErrors) Println(v ...any) { l.log.Warn("metrics: " + fmt.Sprint(v...)) }
