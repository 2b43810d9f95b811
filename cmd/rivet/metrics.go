package main

import (
	"context"
	"errors"
	"log/slog"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/metrics"
)

// newServiceRegistry is a service's Prometheus registry, with the Go
// runtime's and the process's collectors.
func newServiceRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// isDefaultMetricsAddr reports whether addr is option's default.
func isDefaultMetricsAddr(option, addr string) bool {
	o, ok := config.Lookup("metrics", option)
	return ok && o.DefaultString() == addr
}

// serveMetrics serves reg on [metrics] option (api_listen or
// conductor_listen) when set; the returned function stops it.
func serveMetrics(cfg *config.Config, option, addr string, reg *prometheus.Registry, log *slog.Logger) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	srv, err := metrics.Listen("[metrics] "+option, addr, cfg.Metrics.AllowRemote, reg, log)
	if errors.Is(err, syscall.EADDRINUSE) && isDefaultMetricsAddr(option, addr) {
		// Several services of one kind on one host (two conductors, a
		// test bed) share the default port: the first serves, the others
		// say how to get theirs, and run.
		log.Warn("metrics not served: the default metrics port is in use on this host (another rivet service?); "+
			"set [metrics] "+option+" to a free host:port, or empty to disable it", "address", addr, "error", err)
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	srv.Serve()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	}, nil
}
