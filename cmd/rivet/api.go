package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/rpc/jsonrpc"
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
			"pin_release_version, log_level and the http_basic_auth_user_file; SIGTERM turns GET /healthz to 503 for " +
			"[api] shutdown_delay while still serving, then drains in-flight requests within " +
			"[api] graceful_shutdown_timeout.",
		Action: runAPI,
	}
}

func runAPI(c *cli.Context) error {
	cfg, err := loadServiceConfig(c, config.ServiceAPI)
	if err != nil {
		return err
	}
	log, level, err := logging.New(os.Stderr, cfg.Default.LogFormat, cfg.Default.LogLevel)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	log = log.With("service", "api", "host", cfg.Default.Host)
	logNotices(log, cfg, config.ServiceAPI)
	warnTestClockSkew(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, stopTooOld := context.WithCancelCause(ctx) // a newer release was finalized while serving
	defer stopTooOld(nil)

	table := releaseTable()
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
	guard := newGuard(dbh, cfg, db.BinaryAPI, log, db.BinaryAPI)
	startReloader(ctx, configFiles(c), cfg, pinner, level, guard, log)
	if err := schemaCurrent(ctx, dbh); err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		return cli.Exit("api: "+err.Error(), 1)
	}
	beat, err := registerAPI(ctx, guard, cfg, pinner, log, stopTooOld)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 1)
	}
	defer beat()
	mreg := newServiceRegistry()
	h, err := buildAPIMetrics(ctx, cfg, dbh, reg, pinner, log, mreg)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	stopMetrics, err := serveMetrics(cfg, "api_listen", cfg.Metrics.APIListen, mreg, log)
	if err != nil {
		return cli.Exit("api: "+err.Error(), 2)
	}
	defer stopMetrics()
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
	so := apiServeOptions(cfg, log)
	so.TLS = tlsCfg
	if err := api.Serve(ctx, ln, h, so); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if err := context.Cause(ctx); isTooOld(err) {
		return cli.Exit("api: "+err.Error(), 1)
	}
	log.Info("REST API stopped")
	return nil
}

// apiServeOptions are the REST API server's limits and shutdown from [api]
// (TLS aside).
func apiServeOptions(cfg *config.Config, log *slog.Logger) api.ServeOptions {
	return api.ServeOptions{ShutdownTimeout: cfg.API.GracefulShutdownTimeout, ShutdownDelay: cfg.API.ShutdownDelay,
		Logger: log, MaxHeaderBytes: cfg.API.MaxHeaderSize, BodyTimeout: cfg.API.BodyTimeout,
		MaxConnections: cfg.API.MaxConnections}
}

// buildAPI wires the REST API over dbh: conductors over JSON-RPC routed by
// the hash ring of live conductors, auth per [DEFAULT] auth_strategy,
// Prometheus metrics on a registry of its own (served at /metrics behind
// the auth).
func buildAPI(ctx context.Context, cfg *config.Config, dbh *db.DB, reg *objects.Registry, pinner *release.Pinner, log *slog.Logger) (http.Handler, error) {
	return buildAPIMetrics(ctx, cfg, dbh, reg, pinner, log, newServiceRegistry())
}

// buildAPIMetrics is buildAPI with the metrics registry given, which the
// caller also serves on [metrics] api_listen.
func buildAPIMetrics(ctx context.Context, cfg *config.Config, dbh *db.DB, reg *objects.Registry, pinner *release.Pinner, log *slog.Logger,
	metrics *prometheus.Registry) (http.Handler, error) {
	tr, err := jsonRPCTransport(cfg)
	if err != nil {
		return nil, err
	}
	return buildAPIWith(ctx, cfg, dbh, reg, pinner, log, tr, dbConductorLister(dbh, cfg.Conductor.HeartbeatTimeout), metrics)
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
	tr rpc.Transport, lister rpc.ConductorLister, metrics *prometheus.Registry) (http.Handler, error) {
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(reg, pinner), tr)
	router := rpc.NewRouter(lister, cfg.Default.HashPartitionExponent, cfg.Default.HashRingResetInterval)
	store, err := newStore(cfg, dbh, reg, pinner, log)
	if err != nil {
		return nil, err
	}
	deps := api.Deps{
		Store:            store,
		Conductor:        rpc.ConductorAPI{Client: client, Router: router},
		Conductors:       lister,
		Ring:             router,
		CatalogTTL:       cfg.Default.HashRingResetInterval,
		Pinner:           pinner,
		Logger:           log,
		MaxLimit:         cfg.API.MaxLimit,
		MaxBodyBytes:     int64(cfg.API.MaxRequestBodySize),
		MaxPatchOps:      cfg.API.MaxPatchOperations,
		RateLimit:        api.RateLimit{PerSecond: cfg.API.RateLimit, Burst: cfg.API.RateLimitBurst},
		Metrics:          metrics,
		HeartbeatTimeout: cfg.Conductor.HeartbeatTimeout,
		AutoDiscovery:    api.AutoDiscovery{Enabled: cfg.AutoDiscovery.Enabled, Driver: cfg.AutoDiscovery.Driver},
	}
	if deps.Links, err = apiLinks(cfg.API); err != nil {
		return nil, err
	}
	if cfg.Default.AuthStrategy == "http_basic" {
		users, err := loadHtpasswd(ctx, "[DEFAULT] http_basic_auth_user_file", cfg.Default.HTTPBasicAuthUserFile, log)
		if err != nil {
			return nil, err
		}
		deps.Auth = users
		if path := cfg.API.HTTPBasicProjectsFile; path != "" {
			projects, err := loadProjects(ctx, "[api] http_basic_projects_file", path, log)
			if err != nil {
				return nil, err
			}
			deps.Projects = projects
		}
	}
	deps.ProjectAdminManagesOwnNodes = cfg.API.ProjectAdminCanManageOwn
	return api.New(deps)
}

// apiLinks is where links point, per [api] public_endpoint and
// trusted_proxies (both validated when the configuration loaded).
func apiLinks(c config.APIOpts) (api.Links, error) {
	var l api.Links
	if c.PublicEndpoint != "" {
		ep, err := config.PublicEndpoint(c.PublicEndpoint)
		if err != nil {
			return l, fmt.Errorf("[api] public_endpoint: %w", err)
		}
		l.PublicEndpoint = ep
	}
	proxies, err := config.TrustedProxies(c.TrustedProxies)
	if err != nil {
		return l, fmt.Errorf("[api] trusted_proxies: %w", err)
	}
	l.TrustedProxies = proxies
	return l, nil
}

// jsonRPCTransport is the JSON-RPC client per [json_rpc].
func jsonRPCTransport(cfg *config.Config) (*jsonrpc.HTTPTransport, error) {
	j := cfg.JSONRPC
	opts := jsonrpc.HTTPTransportOptions{Timeout: j.Timeout, Port: j.Port,
		LocalHost: cfg.Default.Host, LocalAddr: jsonrpc.LocalDialAddr(j.HostIP)}
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
			pool, err := loadCAFile(j.CAFile)
			if err != nil {
				return nil, err
			}
			tc.RootCAs = pool
		}
		// Presented only to a conductor that asks for a client
		// certificate ([json_rpc] require_client_certificate).
		if j.CertFile != "" && j.KeyFile != "" {
			cert, err := tls.LoadX509KeyPair(j.CertFile, j.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("[json_rpc] cert_file/key_file: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		opts.TLS = tc
	}
	return jsonrpc.NewHTTPTransport(opts), nil
}

// loadCAFile reads [json_rpc] cafile.
func loadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("[json_rpc] cafile: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("[json_rpc] cafile %s holds no PEM certificate", path)
	}
	return pool, nil
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
