package conductor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rivetmetal/rivet/core/conductor/agentclient"
	"github.com/rivetmetal/rivet/core/conductor/bootserver"
	"github.com/rivetmetal/rivet/core/conductor/powersync"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/upgrade"
)

// Deps are a Service's collaborators.
type Deps struct {
	Store   *db.Store
	Drivers DriverSet
	Pinner  *release.Pinner
	// Logger defaults to discarding.
	Logger *slog.Logger
	// JSONRPC, when set, serves the RPC API over JSON-RPC from Start to
	// Stop.
	JSONRPC *JSONRPCOptions
	// Guard enforces the finalized-release rules (ARCHITECTURE §4): Start
	// refuses what it refuses, pin changes go through it. Nil builds one
	// for this conductor alone.
	Guard *upgrade.Guard
	// TooOld is called, once, when a newer release than this code was
	// finalized while the conductor ran; the process should then stop.
	// Nil only logs.
	TooOld func(error)
	// Rescue are the rescue implementations this conductor runs, by the
	// name a node's rescue_interface gives (see RescueInterface), besides
	// the conductor's own "agent" (AgentRescue; one given under that name
	// replaces it); with no-rescue, rescue is refused.
	Rescue map[string]RescueInterface
	// Metrics receives the conductor's Prometheus metrics; nil keeps them
	// on a registry nobody reads.
	Metrics *Metrics

	// wrapListener, in tests, wraps the JSON-RPC listener.
	wrapListener func(net.Listener) net.Listener
}

// Service is one rivet conductor. Create it with New, then Start and Stop
// it once each.
type Service struct {
	// rescuers are Deps.Rescue.
	rescuers map[string]RescueInterface
	// allocating holds the IDs of the allocations being processed here,
	// so the start-up resume and a create's own processing never both
	// work on one (the loser would mark a reserved allocation failed).
	allocating sync.Map
	cfg        Config
	store      *db.Store
	db         *db.DB
	drivers    DriverSet
	catalogs   catalogCache
	pinner     *release.Pinner
	finalize   *upgrade.Guard
	tooOld     func(error)
	log        *slog.Logger

	tasks   *TaskManager
	creates *groupCreator // create_node's group commit
	pool    *workers.Pool
	server  *rpc.Server
	router  *rpc.Router
	psync   *powersync.Scheduler
	http    *jsonRPCListener
	boot    *bootserver.Server  // iPXE scripts, when BootHTTPAddress is set
	agent   *agentclient.Client // the ironic-python-agent's command API
	// followUps runs what agent heartbeats leave to do (agent_check.go).
	followUps agentFollowUps
	metrics   *Metrics

	// validations caches drivers' Validate answers briefly
	// (validate_driver.go).
	validations validationCache

	conductorID atomic.Int64
	// draining is set when Stop begins: no new background work, and
	// heartbeats write the rows offline. beatMu orders it with a heartbeat
	// in progress, so none marks the rows online again after Stop's writes.
	draining atomic.Bool
	beatMu   sync.Mutex
	// refusing is set once the rows say offline: from then on RPCs are
	// answered TemporaryFailure, and the caller's fresh ring no longer
	// names this conductor (before that, a refusal would be retried here).
	refusing atomic.Bool
	// lingering is set while Stop keeps the JSON-RPC listener open.
	lingering atomic.Bool
	// abortWork is closed when in-flight work must stop (graceful
	// shutdown timed out); work contexts derive from it.
	abortWork chan struct{}
	stopBg    chan struct{}
	bg        sync.WaitGroup
	// stopBeat ends the heartbeat, which runs (offline) until the leases
	// are released so nobody takes over work that is finishing.
	stopBeat  chan struct{}
	beat      sync.WaitGroup
	powerSeen sync.Map // node UUID → consecutive differing syncs (int)
	syncLog   *failureLog
	// sensors holds the latest sensor readings (sensors.go);
	// sensorsNoted the hardware types logged as unable to read them.
	sensors      *sensorStore
	sensorsNoted sync.Map
	// consoles are the node consoles this conductor started (console.go);
	// consolesSynced is closed when Start's console pass has ended.
	consoles       consoles
	consolesSynced chan struct{}
	// servicePin is the pin last written to the services row.
	servicePin atomic.Pointer[string]
}

// New returns a conductor that has started nothing yet.
func New(cfg Config, d Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Store == nil || d.Drivers == nil || d.Pinner == nil {
		return nil, errors.New("conductor: Store, Drivers and Pinner are required")
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("conductor", cfg.Hostname)
	pool, err := workers.New(cfg.Workers)
	if err != nil {
		return nil, err
	}
	if d.Guard == nil {
		d.Guard = upgrade.NewGuard(d.Store.DB(), d.Pinner.Table(), upgrade.GuardOptions{Name: db.BinaryConductor,
			Hostname: cfg.Hostname, Binaries: []string{db.BinaryConductor}, Timeout: cfg.HeartbeatTimeout,
			ForgetTimeout: cfg.ServiceForgetTimeout, Logger: log})
	}
	var once sync.Once
	tooOld := func(err error) {
		if d.TooOld != nil {
			once.Do(func() { d.TooOld(err) })
		}
	}
	s := &Service{
		cfg: cfg, store: d.Store, db: d.Store.DB(), drivers: d.Drivers, pinner: d.Pinner, finalize: d.Guard, tooOld: tooOld, log: log,
		tasks:          NewTaskManager(d.Store, cfg.Hostname, cfg.LeaseDuration, cfg.LockRetryAttempts, cfg.LockRetryInterval, log),
		creates:        &groupCreator{store: d.Store, maxWriters: maxCreateWriters},
		pool:           pool,
		agent:          newAgentClient(cfg.Agent),
		followUps:      newAgentFollowUps(),
		abortWork:      make(chan struct{}),
		stopBg:         make(chan struct{}),
		consolesSynced: make(chan struct{}),
		stopBeat:       make(chan struct{}),
		rescuers:       map[string]RescueInterface{},
		metrics:        d.Metrics,
	}
	for name, r := range d.Rescue {
		s.rescuers[name] = r
	}
	if _, ok := s.rescuers[AgentRescue]; !ok {
		s.rescuers[AgentRescue] = agentRescue{s} // the conductor's own
	}
	s.syncLog = newFailureLog(log.With("periodic", "power_sync"))
	if s.metrics == nil {
		if s.metrics, err = NewMetrics(prometheus.NewRegistry()); err != nil {
			return nil, err
		}
	}
	s.sensors = newSensorStore()
	for _, c := range []prometheus.Collector{newNodeCollector(s), s.sensors} {
		if err := s.metrics.reg.Register(c); err != nil {
			return nil, fmt.Errorf("conductor metrics: %w", err)
		}
	}
	s.tasks.metrics = s.metrics
	s.tasks.history = &historyRecorder{cfg: cfg.History, store: d.Store, pinner: d.Pinner, host: cfg.Hostname, log: log}
	s.router = rpc.NewRouter(s.listConductors, cfg.HashPartitionExponent, cfg.RingResetInterval)
	s.server = rpc.NewServer(rpc.ConductorMethods(), rpc.ObjectCodecFor(d.Store.Registry(), d.Pinner), log, context.Background())
	s.server.SetObserver(s.metrics.rpcObserver())
	s.registerHandlers()
	if s.psync, err = powersync.New(cfg.PowerSync, powersync.Deps{
		Source: powerSource{s}, Prober: powerProber{s}, Recorder: powerRecorder{s}, Runner: pool,
		Logger: log.With("periodic", "power_sync"),
	}); err != nil {
		return nil, err
	}
	if d.JSONRPC != nil {
		if s.http, err = newJSONRPCListener(s.server, *d.JSONRPC, log); err != nil {
			return nil, err
		}
		if d.wrapListener != nil {
			s.http.ln = d.wrapListener(s.http.ln)
		}
	}
	return s, nil
}

// Hostname is the name the conductor registered as.
func (s *Service) Hostname() string { return s.cfg.Hostname }

// RPCServer is the conductor's RPC dispatcher, for in-process use
// (all-in-one: rpc.LocalTransport).
func (s *Service) RPCServer() *rpc.Server { return s.server }

// Tasks is the conductor's task manager.
func (s *Service) Tasks() *TaskManager { return s.tasks }

// Addr is the JSON-RPC listener's address, or "" without one.
func (s *Service) Addr() string {
	if s.http == nil {
		return ""
	}
	return s.http.addr()
}

// BootAddr is the iPXE script server's address, or "" without one.
func (s *Service) BootAddr() string {
	if s.boot == nil {
		return ""
	}
	return s.boot.Addr()
}

// Start registers the conductor (conductors and services rows, hardware
// interfaces, plugin negotiation results), releases the leases a previous
// incarnation held, fails the stuck nodes it owns, and starts the
// heartbeat, the takeover periodic, power-state sync, the JSON-RPC
// listener and the iPXE script server.
func (s *Service) Start(ctx context.Context) error {
	// The services row first, so a concurrent watermark advance sees this
	// conductor; then the finalized-release checks, which also resolve
	// the pin and advance the watermark before anything is written at the
	// effective release's versions (the conductors row is).
	if err := s.registerService(ctx); err != nil {
		return err
	}
	if err := s.finalize.Start(ctx, s.pinner); err != nil {
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if oerr := s.db.MarkServiceOffline(octx, s.cfg.Hostname, db.BinaryConductor); oerr != nil {
			s.log.Warn("marking the service offline failed", "error", oerr)
		}
		return err
	}
	if err := s.register(ctx); err != nil {
		return err
	}
	n, err := s.db.ReleaseLeasesHeldBy(ctx, s.cfg.Hostname)
	if err != nil {
		return fmt.Errorf("conductor %s: release leases of a previous run: %w", s.cfg.Hostname, err)
	}
	if n > 0 {
		s.log.Warn("released leases left by a previous run of this conductor", "count", n)
	}
	if err := s.router.Refresh(ctx); err != nil {
		return fmt.Errorf("conductor %s: build hash ring: %w", s.cfg.Hostname, err)
	}
	if s.cfg.BootHTTPAddress != "" {
		bootLog := s.log.With("server", "boot")
		h := bootserver.NewHandler(bootserver.StoreSource{Store: s.store, InspectionCallback: s.cfg.Inspector.CallbackEndpointOverride}, bootLog)
		if s.boot, err = bootserver.Listen(s.cfg.BootHTTPAddress, h, bootLog); err != nil {
			return fmt.Errorf("conductor %s: %w", s.cfg.Hostname, err)
		}
		s.background(func() {
			if err := s.boot.Serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("boot server stopped", "error", err)
			}
		})
	}
	s.checkOrphans(ctx) // fix stuck states this conductor owns now
	if err := s.pool.TryAPI(func() {
		wctx, cancel := s.workContext(ctx)
		defer cancel()
		s.resumeAllocations(wctx) // those a previous run left allocating
	}); err != nil {
		s.log.Warn("could not start resuming allocations", "error", err)
	}
	s.beat.Add(1)
	go func() { defer s.beat.Done(); s.heartbeatLoop() }()
	s.background(s.orphanLoop)
	s.background(func() {
		// Ironic's _start_consoles: consoles enabled on nodes now ours.
		defer close(s.consolesSynced)
		cctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.CheckInterval, 30*time.Second))
		defer cancel()
		s.syncConsoles(cctx)
	})
	if s.cfg.History.CleanupInterval > 0 {
		s.background(s.historyCleanupLoop)
	}
	if s.cfg.Sensors.Enabled && s.cfg.Sensors.Interval > 0 {
		s.background(s.sensorLoop)
	}
	s.background(func() {
		if err := s.psync.Run(context.Background()); err != nil {
			s.log.Error("power-state sync stopped", "error", err)
		}
	})
	if s.http != nil {
		s.background(func() {
			if err := s.http.serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("JSON-RPC server stopped", "error", err)
			}
		})
	}
	s.log.Info("conductor started", "hardware_types", s.drivers.HardwareTypes(), "group", s.cfg.Group,
		"rpc_addr", s.Addr(), "boot_addr", s.BootAddr(), "release", release.Current)
	return nil
}

func (s *Service) background(fn func()) {
	s.bg.Add(1)
	go func() { defer s.bg.Done(); fn() }()
}

// Stop shuts the conductor down gracefully: new RPCs get TemporaryFailure,
// the conductor goes offline so the ring moves away from it, in-flight
// work gets GracefulShutdownTimeout (bounded by ctx), then work still
// running is cancelled (its nodes go to their failure states), every lease
// is released and the background loops stop.
func (s *Service) Stop(ctx context.Context) error {
	s.beatMu.Lock()
	first := s.draining.CompareAndSwap(false, true)
	s.beatMu.Unlock()
	if !first {
		return nil
	}
	s.log.Info("conductor shutting down: no new work, going offline", "in_flight", s.pool.Stats())
	if s.http != nil {
		s.http.drain()
	}
	var errs []error
	if err := s.db.TouchConductor(ctx, s.cfg.Hostname, false); err != nil {
		errs = append(errs, err)
	}
	if err := s.db.MarkServiceOffline(ctx, s.cfg.Hostname, db.BinaryConductor); err != nil {
		errs = append(errs, err)
	}
	offlineAt := time.Now()
	s.refusing.Store(true)
	close(s.stopBg)
	graceCtx, cancel := context.WithTimeout(ctx, s.cfg.GracefulShutdownTimeout)
	defer cancel()
	_ = s.psync.Stop(graceCtx)
	if s.http != nil {
		if s.takesOver(graceCtx) {
			s.lingering.Store(true)
			s.http.lingerUntil(graceCtx, offlineAt.Add(s.cfg.RingResetInterval), s.log)
		}
		// Requests in progress are short: long work runs on the pool.
		if err := s.http.shutdown(graceCtx); err != nil {
			errs = append(errs, fmt.Errorf("conductor %s: stop JSON-RPC server: %w", s.cfg.Hostname, err))
		}
	}
	if s.boot != nil {
		if err := s.boot.Shutdown(graceCtx); err != nil {
			errs = append(errs, fmt.Errorf("conductor %s: stop boot server: %w", s.cfg.Hostname, err))
		}
	}
	if err := s.pool.Close(graceCtx); err != nil {
		s.log.Warn("in-flight work did not finish within graceful_shutdown_timeout; cancelling it",
			"timeout", s.cfg.GracefulShutdownTimeout, "running", s.pool.Stats())
		close(s.abortWork)
		// Cancelled work records its failure and releases its lease.
		abortCtx, cancelAbort := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = s.pool.Close(abortCtx)
		cancelAbort()
	}
	s.bg.Wait() // the takeover periodic and power sync are done too
	s.followUps.stop()
	if n := s.tasks.ReleaseAll(ctx); n > 0 {
		s.log.Warn("released leases still held at shutdown", "count", n)
	}
	if _, err := s.db.ReleaseLeasesHeldBy(context.WithoutCancel(ctx), s.cfg.Hostname); err != nil {
		errs = append(errs, err)
	}
	close(s.stopBeat)
	s.beat.Wait()
	// A heartbeat that ran while draining marked both rows online again.
	if err := s.db.TouchConductor(context.WithoutCancel(ctx), s.cfg.Hostname, false); err != nil {
		errs = append(errs, err)
	}
	if err := s.db.MarkServiceOffline(context.WithoutCancel(ctx), s.cfg.Hostname, db.BinaryConductor); err != nil {
		errs = append(errs, err)
	}
	s.log.Info("conductor stopped")
	return errors.Join(errs...)
}

// takesOver reports whether another live conductor serves one of this
// conductor's hardware types in its group: only then is a refused call
// retried elsewhere, so only then is keeping the listener open useful (a
// lone conductor stops without waiting for rings to expire).
func (s *Service) takesOver(ctx context.Context) bool {
	others, err := s.listConductors(ctx)
	if err != nil {
		return true // cannot tell: keep the safe behaviour
	}
	mine := s.drivers.HardwareTypes()
	for _, c := range others {
		if c.Hostname == s.cfg.Hostname || c.Group != s.cfg.Group {
			continue
		}
		for _, hw := range c.HardwareTypes {
			if slices.Contains(mine, hw) {
				return true
			}
		}
	}
	return false
}

// workContext returns a context for background work started by a request:
// it outlives the request and ends only when shutdown aborts work.
func (s *Service) workContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	go func() {
		select {
		case <-s.abortWork:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// listConductors feeds the hash ring with the live conductors.
func (s *Service) listConductors(ctx context.Context) ([]rpc.ConductorInfo, error) {
	cs, err := s.db.LiveConductors(ctx, s.cfg.HeartbeatTimeout)
	if err != nil {
		return nil, err
	}
	out := make([]rpc.ConductorInfo, len(cs))
	for i, c := range cs {
		out[i] = rpc.ConductorInfo{Hostname: c.Hostname, Group: c.ConductorGroup, HardwareTypes: c.Drivers}
	}
	return out, nil
}
