package bootserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server is the boot HTTP listener. Listen binds it; Serve serves until
// Shutdown.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen binds addr (host:port; port 0 picks one) for h. A request gets
// 10 s for its headers, 15 s to be read and 30 s to be answered: iPXE asks
// small questions, so a client slower than that is broken, not slow.
func Listen(addr string, h http.Handler, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("boot server: listen on %s: %w", addr, err)
	}
	return &Server{ln: ln, srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}, nil
}

// Addr is the address bound, with the port chosen when it was 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Shutdown, then returns http.ErrServerClosed.
func (s *Server) Serve() error { return s.srv.Serve(s.ln) }

// Shutdown stops accepting, waits for requests in progress (bounded by
// ctx) and closes the listener, also when Serve was never called.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	_ = s.ln.Close() // Shutdown closed it if Serve had started
	return err
}
