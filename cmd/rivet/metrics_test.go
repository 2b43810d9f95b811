package main

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/config"
)

// A taken default metrics port is a warning (two services of one kind on
// a host); a taken configured port and a non-loopback address without
// allow_remote are errors; an empty address serves nothing.
func TestServeMetrics(t *testing.T) {
	cfg := config.Default()
	reg := newServiceRegistry()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	stop, err := serveMetrics(cfg, "conductor_listen", "", reg, log)
	if err != nil || stop == nil {
		t.Fatalf("empty address: %v", err)
	}
	stop()

	if _, err := serveMetrics(cfg, "api_listen", "0.0.0.0:0", reg, log); err == nil || !strings.Contains(err.Error(), "allow_remote") {
		t.Fatalf("non-loopback without allow_remote: %v", err)
	}
	cfg.Metrics.AllowRemote = true
	stop, err = serveMetrics(cfg, "api_listen", "0.0.0.0:0", reg, log)
	if err != nil {
		t.Fatalf("non-loopback with allow_remote: %v", err)
	}
	stop()

	// Hold a port, then ask for it as a configured address: fatal.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := serveMetrics(cfg, "api_listen", ln.Addr().String(), reg, log); err == nil {
		t.Fatal("a configured address in use was accepted")
	}
	// The default address in use: a warning naming the option.
	def := "127.0.0.1:" + config.DefaultConductorMetricsPort
	held, err := net.Listen("tcp", def)
	if err != nil {
		t.Skipf("cannot hold the default port to test it: %v", err)
	}
	defer held.Close()
	stop, err = serveMetrics(cfg, "conductor_listen", def, reg, log)
	if err != nil {
		t.Fatalf("default address in use: %v", err)
	}
	stop()
	if !strings.Contains(logs.String(), "set [metrics] conductor_listen") {
		t.Fatalf("no warning naming the option:\n%s", logs.String())
	}
}
