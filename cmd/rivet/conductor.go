package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/upgrade"
	"github.com/rivetmetal/rivet/plugins/host"
)

func conductorCommand() *cli.Command {
	return &cli.Command{
		Name:  "conductor",
		Usage: "run the conductor service: node leases, driver plugins, JSON-RPC ([json_rpc] host_ip:port)",
		Description: "Registers in the database, starts the driver plugins (built-in drivers re-execute " +
			"this binary; rivet-driver-* in [conductor] plugin_dir take precedence) and serves the " +
			"conductor RPC API. SIGHUP reloads pin_release_version, log_level " +
			"and [json_rpc] http_basic_auth_user_file. SIGTERM stops taking " +
			"work, goes offline, finishes in-flight work within [conductor] graceful_shutdown_timeout, " +
			"releases its node leases and exits 0.",
		Action: runConductor,
	}
}

// warnUnresolvedHost warns when this conductor listens for other hosts
// ([json_rpc] host_ip not loopback) under a [DEFAULT] host that does not
// resolve here: APIs on other hosts dial it at that name, and answer 503
// naming it for its nodes until it resolves (docs/admin/ha.md).
func warnUnresolvedHost(log *slog.Logger, host, hostIP string, lookup func(context.Context, string) ([]string, error)) {
	if ip := net.ParseIP(hostIP); ip != nil && ip.IsLoopback() || net.ParseIP(host) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := lookup(ctx, host); err != nil {
		log.Warn("[DEFAULT] host does not resolve on this host: APIs on other hosts dial this conductor at that name "+
			"and answer 503 for its nodes until it resolves to [json_rpc] host_ip (DNS or /etc/hosts)",
			"host", host, "host_ip", hostIP, "error", err)
	}
}

func runConductor(c *cli.Context) error {
	cfg, err := loadServiceConfig(c, config.ServiceConductor)
	if err != nil {
		return err
	}
	fail := func(code int, err error) error { return cli.Exit("conductor: "+conductorErrLine(err), code) }
	if cfg.Default.RPCTransport != "json-rpc" {
		return fail(2, errors.New("[DEFAULT] rpc_transport must be json-rpc for a stand-alone conductor (local is for all-in-one)"))
	}
	log, level, err := logging.New(os.Stderr, cfg.Default.LogFormat, cfg.Default.LogLevel)
	if err != nil {
		return fail(2, err)
	}
	log = log.With("service", "conductor", "host", cfg.Default.Host)
	logNotices(log, cfg, config.ServiceConductor)
	warnUnresolvedHost(log, cfg.Default.Host, cfg.JSONRPC.HostIP, net.DefaultResolver.LookupHost)
	warnTestClockSkew(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, stopTooOld := context.WithCancelCause(ctx) // a newer release was finalized while running
	defer stopTooOld(nil)

	table := releaseTable()
	pin, err := cfg.Pin(table)
	if err != nil {
		return fail(2, err)
	}
	pinner := release.NewPinner(table, pin)

	dbh, err := db.Open(ctx, cfg.Database.Connection, dbOptions(cfg))
	if err != nil {
		return fail(1, err)
	}
	defer dbh.Close()
	// SIGHUP stays handled through the graceful shutdown.
	reloadCtx, stopReload := context.WithCancel(context.Background())
	defer stopReload()
	guard := upgrade.NewGuard(dbh, table, upgrade.GuardOptions{Name: db.BinaryConductor,
		Hostname: conductor.ConfigFrom(cfg).Hostname, Binaries: []string{db.BinaryConductor},
		Timeout: cfg.Conductor.HeartbeatTimeout, ForgetTimeout: cfg.Default.ServiceForgetTimeout, Logger: log})
	startReloader(reloadCtx, configFiles(c), cfg, pinner, level, guard, log)
	if err := schemaCurrent(ctx, dbh); err != nil {
		return fail(2, err)
	}
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		return fail(1, err)
	}
	mreg := newServiceRegistry()
	cmetrics, err := conductor.NewMetrics(mreg)
	if err != nil {
		return fail(1, err)
	}
	mgr, err := startPlugins(ctx, cfg, log, cmetrics)
	if err != nil {
		return fail(1, err)
	}
	defer mgr.Close()
	rpcOpts, err := conductorJSONRPC(reloadCtx, cfg, log)
	if err != nil {
		return fail(2, err)
	}
	store, err := newStore(cfg, dbh, reg, pinner, log)
	if err != nil {
		return fail(2, err)
	}
	svc, err := conductor.New(conductor.ConfigFrom(cfg), conductor.Deps{
		Store:   store,
		Drivers: conductor.PluginDrivers{Manager: mgr, Enabled: cfg.Conductor.EnabledHardwareTypes},
		Pinner:  pinner,
		Logger:  log,
		JSONRPC: rpcOpts,
		Guard:   guard,
		TooOld:  stopTooOld,
		Metrics: cmetrics,
	})
	if err != nil {
		return fail(2, err)
	}
	stopMetrics, err := serveMetrics(cfg, "conductor_listen", cfg.Metrics.ConductorListen, mreg, log)
	if err != nil {
		return fail(2, err)
	}
	defer stopMetrics()
	if err := svc.Start(ctx); err != nil {
		_ = svc.Stop(context.Background())
		return fail(1, err)
	}
	<-ctx.Done()
	stop() // a second SIGTERM now kills the process
	log.Info("signal received; shutting down gracefully", "graceful_shutdown_timeout", cfg.Conductor.GracefulShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Conductor.GracefulShutdownTimeout+30*time.Second)
	defer cancel()
	if err := svc.Stop(sctx); err != nil {
		return fail(1, err)
	}
	if err := context.Cause(ctx); isTooOld(err) {
		return fail(1, err)
	}
	return nil
}

// startPlugins starts the driver plugins: built-ins by re-executing this
// binary, rivet-driver-* in plugin_dir (default: this binary's directory)
// first.
func startPlugins(ctx context.Context, cfg *config.Config, log *slog.Logger, obs host.Observer) (*host.Manager, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the rivet executable for built-in drivers: %w", err)
	}
	dir := cfg.Conductor.PluginDir
	if dir == "" {
		dir = filepath.Dir(exe)
	}
	// Only the built-in drivers serving an enabled hardware type start
	// ("fake" serves fake-hardware); plugin_dir binaries always do.
	var names []string
	for name := range builtinDrivers {
		if slices.Contains(cfg.Conductor.EnabledHardwareTypes, name) ||
			slices.Contains(cfg.Conductor.EnabledHardwareTypes, name+"-hardware") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	sums := map[string]string{}
	for _, item := range cfg.Conductor.PluginChecksums {
		name, sum, _ := strings.Cut(item, ":")
		sums[strings.TrimPrefix(name, host.BinaryPrefix)] = strings.ToLower(sum)
	}
	builtIn := host.BuiltInCommands(exe, names...)
	for name, cmd := range builtIn {
		cmd.Env = builtinPluginEnv(cfg, name)
		builtIn[name] = cmd
	}
	mgr, err := host.New(host.Config{PluginDir: dir, BuiltIn: builtIn, Checksums: sums,
		Logger: log.With("component", "plugins"), HostVersion: release.Current, Observer: obs})
	if err != nil {
		return nil, err
	}
	if err := mgr.Start(ctx); err != nil {
		mgr.Close()
		return nil, err
	}
	return mgr, nil
}

// conductorJSONRPC is the listener configuration from [json_rpc]; its
// htpasswd file is re-read on SIGHUP until ctx ends.
func conductorJSONRPC(ctx context.Context, cfg *config.Config, log *slog.Logger) (*conductor.JSONRPCOptions, error) {
	j := cfg.JSONRPC
	o := &conductor.JSONRPCOptions{HostIP: j.HostIP, Port: j.Port, MaxBodyBytes: int64(j.MaxRequestBodySize),
		MaxHeaderBytes: j.MaxHeaderSize, BodyTimeout: j.BodyTimeout}
	if j.UseSSL {
		if j.CertFile == "" || j.KeyFile == "" {
			return nil, errors.New("[json_rpc] use_ssl needs cert_file and key_file")
		}
		o.CertFile, o.KeyFile = j.CertFile, j.KeyFile
		if j.RequireClientCert {
			pool, err := loadCAFile(j.CAFile)
			if err != nil {
				return nil, err
			}
			o.ClientCAs = pool
		}
	}
	strategy := j.AuthStrategy
	if strategy == "" {
		strategy = cfg.Default.AuthStrategy
	}
	if strategy == "http_basic" {
		users, err := loadHtpasswd(ctx, "[json_rpc] http_basic_auth_user_file", j.HTTPBasicAuthUserFile, log)
		if err != nil {
			return nil, err
		}
		o.Users = users
	}
	return o, nil
}

// conductorErrLine folds an error into one line.
func conductorErrLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// warnTestClockSkew logs the test-only clock skew (core/clock) when it is
// set, so that it is never in force unnoticed.
func warnTestClockSkew(log *slog.Logger) {
	switch d, err := clock.Skew(); {
	case err != nil:
		log.Warn("test clock skew variable set but not a duration; ignored", "error", err)
	case d != 0:
		log.Warn("TEST ONLY: this process's wall clock is skewed", "variable", clock.SkewEnv, "skew", d.String())
	}
}
