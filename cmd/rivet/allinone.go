package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins/host"
)

func allInOneCommand() *cli.Command {
	return &cli.Command{
		Name:  "all-in-one",
		Usage: "run the REST API and a conductor in one process, with in-process RPC",
		Description: "For a single host: the API ([api] host_ip:port) and a conductor share one process " +
			"and call each other directly, so [json_rpc] is not used. Everything else (database, " +
			"plugins, SIGHUP reload, graceful SIGTERM) behaves as in rivet api and rivet conductor.",
		Action: func(c *cli.Context) error {
			cfg, err := loadServiceConfig(c, config.ServiceAllInOne)
			if err != nil {
				return err
			}
			log, level, err := logging.New(os.Stderr, cfg.Default.LogFormat, cfg.Default.LogLevel)
			if err != nil {
				return cli.Exit("all-in-one: "+err.Error(), 2)
			}
			warnTestClockSkew(log)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			aio, err := startAllInOne(ctx, cfg, configFiles(c), log, level, nil)
			if err != nil {
				return cli.Exit("all-in-one: "+conductorErrLine(err), 1)
			}
			log.Info("serving", "url", aio.URL)
			if err := aio.Wait(); err != nil {
				return cli.Exit("all-in-one: "+conductorErrLine(err), 1)
			}
			return nil
		},
	}
}

// allInOne is a running API and conductor sharing a process.
type allInOne struct {
	URL    string
	DB     *db.DB
	Pinner *release.Pinner

	ctx     context.Context // the API's; its cause says why it stopped
	stopCtx context.CancelCauseFunc

	cfg      *config.Config
	log      *slog.Logger
	svc      *conductor.Service
	plugins  *host.Manager
	beat     func()
	served   chan error
	stopWork context.CancelFunc
	// stopMetrics stop the metrics listeners.
	stopMetrics []func()
}

// startAllInOne starts a conductor and the API over cfg's database (whose
// schema must be current). ln is the API listener; nil listens on
// [api] host_ip:port. The API stops when ctx ends, or when a newer release
// is finalized while it runs (Wait then returns that error); Wait then
// stops the rest.
func startAllInOne(ctx context.Context, cfg *config.Config, files []string, log *slog.Logger, level *slog.LevelVar, ln net.Listener) (_ *allInOne, err error) {
	cfg.Default.RPCTransport = "local" // the conductor serves RPC in process only
	if err := cfg.ValidateService(config.ServiceAllInOne); err != nil {
		return nil, err
	}
	logNotices(log.With("service", "api"), cfg, config.ServiceAllInOne)
	table := releaseTable()
	pin, err := cfg.Pin(table)
	if err != nil {
		return nil, err
	}
	ctx, stopTooOld := context.WithCancelCause(ctx)
	a := &allInOne{Pinner: release.NewPinner(table, pin), cfg: cfg, log: log, served: make(chan error, 1),
		ctx: ctx, stopCtx: stopTooOld}
	defer func() {
		if err != nil {
			if a.svc != nil {
				// Started or refused: either way nothing stays online.
				_ = a.svc.Stop(context.WithoutCancel(ctx))
			}
			a.close()
		}
	}()
	if a.DB, err = db.Open(ctx, cfg.Database.Connection, dbOptions(cfg)); err != nil {
		return nil, err
	}
	// Conductor work outlives the API's ctx: it drains after the API stops.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	a.stopWork = stopWork
	// One process, two services rows: neither is an "other" service.
	guard := newGuard(a.DB, cfg, "rivet all-in-one", log, db.BinaryAPI, db.BinaryConductor)
	startReloader(workCtx, files, cfg, a.Pinner, level, guard, log)
	if err := schemaCurrent(ctx, a.DB); err != nil {
		return nil, err
	}
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		return nil, err
	}
	creg := newServiceRegistry()
	cmetrics, err := conductor.NewMetrics(creg)
	if err != nil {
		return nil, err
	}
	if a.plugins, err = startPlugins(workCtx, cfg, log, cmetrics); err != nil {
		return nil, err
	}
	store, err := newStore(cfg, a.DB, reg, a.Pinner, log)
	if err != nil {
		return nil, err
	}
	clog := log.With("service", "conductor")
	svc, err := conductor.New(conductor.ConfigFrom(cfg), conductor.Deps{
		Store:   store,
		Drivers: conductor.PluginDrivers{Manager: a.plugins, Enabled: cfg.Conductor.EnabledHardwareTypes},
		Pinner:  a.Pinner,
		Logger:  clog,
		Guard:   guard,
		TooOld:  stopTooOld,
		Metrics: cmetrics,
	})
	if err != nil {
		return nil, err
	}
	a.svc = svc
	if err := a.svc.Start(workCtx); err != nil {
		return nil, err
	}
	alog := log.With("service", "api")
	areg := newServiceRegistry()
	h, err := buildAPIWith(workCtx, cfg, a.DB, reg, a.Pinner, alog, rpc.LocalTransport{Server: a.svc.RPCServer()}, a.selfOnly(), areg)
	if err != nil {
		return nil, err
	}
	// One process, both services' metrics listeners, each its own
	// registry as when they run apart (the Go and process families
	// appear on both).
	for _, m := range []struct {
		option, addr string
		reg          *prometheus.Registry
		log          *slog.Logger
	}{{"api_listen", cfg.Metrics.APIListen, areg, alog}, {"conductor_listen", cfg.Metrics.ConductorListen, creg, clog}} {
		stopM, err := serveMetrics(cfg, m.option, m.addr, m.reg, m.log)
		if err != nil {
			return nil, err
		}
		a.stopMetrics = append(a.stopMetrics, stopM)
	}
	if a.beat, err = registerAPI(ctx, guard, cfg, a.Pinner, alog, stopTooOld); err != nil {
		return nil, err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", net.JoinHostPort(cfg.API.HostIP, strconv.Itoa(cfg.API.Port))); err != nil {
			return nil, err
		}
	}
	a.URL = "http://" + ln.Addr().String()
	go func() {
		a.served <- api.Serve(ctx, ln, h, apiServeOptions(cfg, alog))
	}()
	return a, nil
}

// selfOnly routes every node to this process's conductor: the in-process
// transport can reach no other.
func (a *allInOne) selfOnly() rpc.ConductorLister {
	all := dbConductorLister(a.DB, a.cfg.Conductor.HeartbeatTimeout)
	return func(ctx context.Context) ([]rpc.ConductorInfo, error) {
		cs, err := all(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if c.Hostname == a.svc.Hostname() {
				return []rpc.ConductorInfo{c}, nil
			}
		}
		return nil, nil
	}
}

// Wait blocks until the API has stopped (its ctx ended and requests
// drained), then stops the conductor gracefully and releases everything.
func (a *allInOne) Wait() error {
	err := <-a.served
	if cause := context.Cause(a.ctx); isTooOld(cause) && err == nil {
		err = cause
	}
	a.log.Info("API stopped; stopping the conductor", "graceful_shutdown_timeout", a.cfg.Conductor.GracefulShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.Conductor.GracefulShutdownTimeout+30*time.Second)
	defer cancel()
	if serr := a.svc.Stop(sctx); serr != nil && err == nil {
		err = fmt.Errorf("stop the conductor: %w", serr)
	}
	a.close()
	return err
}

func (a *allInOne) close() {
	a.stopCtx(nil)
	for _, stop := range a.stopMetrics {
		stop()
	}
	if a.beat != nil {
		a.beat()
	}
	if a.plugins != nil {
		a.plugins.Close()
	}
	if a.stopWork != nil {
		a.stopWork()
	}
	if a.DB != nil {
		a.DB.Close()
	}
}
