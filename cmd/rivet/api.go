package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/urfave/cli/v2"
)

func apiCommand() *cli.Command {
	return &cli.Command{
		Name:  "api",
		Usage: "serve the Ironic-compatible REST API ([api] host_ip:port)",
		Description: "Serves Ironic's v1 REST API (microversions 1.1 to the effective release's maximum) " +
			"over the database, sending hardware work to conductors over JSON-RPC. SIGHUP reloads " +
			"pin_release_version, log_level and the http_basic_auth_user_file; SIGTERM drains in-flight requests within " +
			"[api] graceful_shutdown_timeout.",
		Action: runAPI,
	}
}

func runAPI(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	log, level, err := logging.New(os.Stderr, cfg.Default.LogFormat, cfg.Default.LogLevel)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	log = log.With("service", "api", "host", cfg.Default.Host)
	warnTestClockSkew(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	table := release.Default()
	pin, err := cfg.Pin(table)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	pinner := release.NewPinner(table, pin)

	dbh, err := db.Open(ctx, cfg.Database.Connection, dbOptions(cfg))
	if err != nil {
		return cli.Exit("api: "+err.Error(), 1)
	}
	defer dbh.Close()
	startReloader(ctx, configFiles(c), cfg, pinner, level, dbh, log)
	if err := schemaCurrent(ctx, dbh); err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		return cli.Exit("api: "+err.Error(), 1)
	}
	beat, err := registerAPI(ctx, dbh, cfg, pinner, log)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 1)
	}
	defer beat()
	h, err := buildAPI(ctx, cfg, dbh, reg, pinner, log)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	tlsCfg, err := apiTLS(cfg.API)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	addr := net.JoinHostPort(cfg.API.HostIP, strconv.Itoa(cfg.API.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 1)
	}
	log.Info("serving REST API", "address", ln.Addr().String(), "tls", tlsCfg != nil,
		"api_max", pinner.Effective().API.String())
	if err := api.Serve(ctx, ln, h, api.ServeOptions{TLS: tlsCfg, ShutdownTimeout: cfg.API.GracefulShutdownTimeout, Logger: log,
		MaxHeaderBytes: cfg.API.MaxHeaderSize}); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	log.Info("REST API stopped")
	return nil
}

// registerAPI records this rivet api in the services table (ARCHITECTURE
// §4) and heartbeats it every service_heartbeat_interval; an "auto" pin
// follows the oldest live service. The returned stop marks it offline.
func registerAPI(ctx context.Context, dbh *db.DB, cfg *config.Config, pinner *release.Pinner, log *slog.Logger) (stop func(), err error) {
	host := cfg.Default.Host
	register := func(ctx context.Context) error {
		_, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: host, Binary: db.BinaryAPI,
			Release: release.Current, ServiceVersion: pinner.Table().Head().ServiceVersion, Pin: pinner.Pin().String()})
		return err
	}
	follow := func(ctx context.Context) {
		if pinner.Pin().Mode != release.PinAuto {
			return
		}
		live, err := dbh.LiveServices(ctx, cfg.Conductor.HeartbeatTimeout)
		if err != nil {
			log.Warn("auto pin: listing live services failed; keeping the current pin", "error", err)
			return
		}
		versions := []int{pinner.Table().Head().ServiceVersion}
		for _, s := range live {
			versions = append(versions, s.ServiceVersion)
		}
		pinner.Set(pinner.Pin(), versions)
	}
	if err := register(ctx); err != nil {
		return nil, err
	}
	follow(ctx)
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(cfg.Default.ServiceHeartbeatInterval)
		defer tick.Stop()
		for {
			select {
			case <-bctx.Done():
				return
			case <-tick.C:
			}
			err := dbh.HeartbeatService(bctx, host, db.BinaryAPI)
			if errors.Is(err, db.ErrNotFound) {
				err = register(bctx)
			}
			if err != nil && bctx.Err() == nil {
				log.Error("service heartbeat failed", "error", err)
			}
			follow(bctx)
		}
	}()
	return func() {
		cancel()
		<-done
		octx, ocancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ocancel()
		if err := dbh.MarkServiceOffline(octx, host, db.BinaryAPI); err != nil {
			log.Warn("marking the service offline failed", "error", err)
		}
	}, nil
}

// buildAPI wires the REST API over dbh: conductors over JSON-RPC routed by
// the hash ring of live conductors, auth per [DEFAULT] auth_strategy,
// Prometheus metrics on a registry of its own.
func buildAPI(ctx context.Context, cfg *config.Config, dbh *db.DB, reg *objects.Registry, pinner *release.Pinner, log *slog.Logger) (http.Handler, error) {
	tr, err := jsonRPCTransport(cfg)
	if err != nil {
		return nil, err
	}
	return buildAPIWith(ctx, cfg, dbh, reg, pinner, log, tr, dbConductorLister(dbh, cfg.Conductor.HeartbeatTimeout))
}

// dbConductorLister lists the live conductors from the database: the
// members of the hash ring.
func dbConductorLister(dbh *db.DB, timeout time.Duration) rpc.ConductorLister {
	return func(ctx context.Context) ([]rpc.ConductorInfo, error) {
		live, err := dbh.LiveConductors(ctx, timeout)
		if err != nil {
			return nil, err
		}
		out := make([]rpc.ConductorInfo, 0, len(live))
		for _, c := range live {
			out = append(out, rpc.ConductorInfo{Hostname: c.Hostname, Group: c.ConductorGroup, HardwareTypes: c.Drivers})
		}
		return out, nil
	}
}

// buildAPIWith wires the REST API with a given RPC transport and conductor
// lister (all-in-one passes the in-process ones). The htpasswd file is
// re-read on SIGHUP until ctx ends.
func buildAPIWith(ctx context.Context, cfg *config.Config, dbh *db.DB, reg *objects.Registry, pinner *release.Pinner, log *slog.Logger,
	tr rpc.Transport, lister rpc.ConductorLister) (http.Handler, error) {
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(reg, pinner), tr)
	router := rpc.NewRouter(lister, cfg.Default.HashPartitionExponent, cfg.Default.HashRingResetInterval)
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	store, err := newStore(cfg, dbh, reg, pinner, log)
	if err != nil {
		return nil, err
	}
	deps := api.Deps{
		Store:        store,
		Conductor:    rpc.ConductorAPI{Client: client, Router: router},
		Conductors:   lister,
		Pinner:       pinner,
		Logger:       log,
		MaxLimit:     cfg.API.MaxLimit,
		MaxBodyBytes: int64(cfg.API.MaxRequestBodySize),
		RateLimit:    api.RateLimit{PerSecond: cfg.API.RateLimit, Burst: cfg.API.RateLimitBurst},
		Metrics:      metrics,
	}
	if cfg.Default.AuthStrategy == "http_basic" {
		users, err := loadHtpasswd(ctx, "[DEFAULT] http_basic_auth_user_file", cfg.Default.HTTPBasicAuthUserFile, log)
		if err != nil {
			return nil, err
		}
		deps.Auth = users
	}
	return api.New(deps)
}

// jsonRPCTransport is the JSON-RPC client per [json_rpc].
func jsonRPCTransport(cfg *config.Config) (*rpc.HTTPTransport, error) {
	j := cfg.JSONRPC
	opts := rpc.HTTPTransportOptions{Timeout: j.Timeout, Port: j.Port}
	strategy := j.AuthStrategy
	if strategy == "" {
		strategy = cfg.Default.AuthStrategy
	}
	if strategy == "http_basic" {
		opts.Username, opts.Password = j.Username, j.Password
	}
	if j.UseSSL {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if j.CAFile != "" {
			pem, err := os.ReadFile(j.CAFile)
			if err != nil {
				return nil, fmt.Errorf("[json_rpc] cafile: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("[json_rpc] cafile %s holds no PEM certificate", j.CAFile)
			}
			tc.RootCAs = pool
		}
		opts.TLS = tc
	}
	return rpc.NewHTTPTransport(opts), nil
}

// apiTLS loads [api] cert_file and key_file when enable_ssl_api is set.
func apiTLS(o config.APIOpts) (*tls.Config, error) {
	if !o.EnableSSLAPI {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("[api] cert_file/key_file: %w", err)
	}
	minV := uint16(tls.VersionTLS12)
	if o.TLSMinimumVersion == "1.3" {
		minV = tls.VersionTLS13
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: minV}, nil
}
