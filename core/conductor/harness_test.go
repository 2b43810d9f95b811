package conductor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/powersync"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/uptrace/bun"
)

// hookedFake is fake-hardware with injectable failures and a gate that
// holds Deploy until released, so tests can act mid-deploy.
type hookedFake struct {
	*fake.Driver
	mu         sync.Mutex
	failDeploy error
	failPower  error
	failNMI    error
	nmis       int           // NMIs that reached the driver
	gate       chan struct{} // when set, Deploy waits for it (or ctx)
}

func (h *hookedFake) InjectNMI(ctx context.Context, n plugins.Node) error {
	h.mu.Lock()
	fail := h.failNMI
	if fail == nil {
		h.nmis++
	}
	h.mu.Unlock()
	if fail != nil {
		return fail
	}
	return h.Driver.InjectNMI(ctx, n)
}

func (h *hookedFake) Deploy(ctx context.Context, n plugins.Node) error {
	h.mu.Lock()
	gate, fail := h.gate, h.failDeploy
	h.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail != nil {
		return fail
	}
	return h.Driver.Deploy(ctx, n)
}

func (h *hookedFake) SetPowerState(ctx context.Context, n plugins.Node, ps plugins.PowerState) error {
	h.mu.Lock()
	fail := h.failPower
	h.mu.Unlock()
	if fail != nil {
		return fail
	}
	return h.Driver.SetPowerState(ctx, n, ps)
}

// SetPowerStateWithin is where power actions go (power interface version
// 2), so the failure hook applies there too.
func (h *hookedFake) SetPowerStateWithin(ctx context.Context, n plugins.Node, ps plugins.PowerState, timeout time.Duration) error {
	h.mu.Lock()
	fail := h.failPower
	h.mu.Unlock()
	if fail != nil {
		return fail
	}
	return h.Driver.SetPowerStateWithin(ctx, n, ps, timeout)
}

func (h *hookedFake) set(fn func(h *hookedFake)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h)
}

// harness is one conductor on a migrated database with fake-hardware,
// reached through the typed RPC client over the in-process transport.
type harness struct {
	t     testing.TB
	dbh   *db.DB
	store *db.Store
	svc   *Service
	hw    *hookedFake
	api   rpc.ConductorAPI
}

func testConfig(host string) Config {
	return Config{
		Hostname: host, HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second,
		LeaseDuration: time.Second, LockRetryAttempts: 2, LockRetryInterval: 20 * time.Millisecond,
		CheckInterval: time.Hour, GracefulShutdownTimeout: 5 * time.Second,
		HashPartitionExponent: 5, RingResetInterval: time.Hour,
		Workers:   workers.Config{Size: 4, ReservedForAPI: 1},
		PowerSync: noPowerSync(),
	}
}

// noPowerSync disables power-state sync; tests that need it enable it.
func noPowerSync() powersync.Config {
	c := powersync.DefaultConfig()
	c.Interval = 0
	return c
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newStore(t testing.TB, dbh *db.DB) *db.Store {
	t.Helper()
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	return db.NewStore(dbh, reg, release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest}))
}

// newHarness starts a conductor named host on dbh (a fresh SQLite
// database when nil), serving fake-hardware and any extra hardware types
// with the same hooked fake driver.
func newHarness(t testing.TB, dbh *db.DB, host string, mod func(*Config), extraHW ...string) *harness {
	t.Helper()
	return startHarness(t, dbh, host, mod, func(hw *hookedFake) StaticDrivers {
		drivers := StaticDrivers{fake.HardwareType: hw}
		for _, x := range extraHW {
			drivers[x] = hw
		}
		return drivers
	})
}

// startHarness is newHarness with the drivers built from the hooked fake.
func startHarness(t testing.TB, dbh *db.DB, host string, mod func(*Config), drivers func(hw *hookedFake) StaticDrivers) *harness {
	t.Helper()
	return startHarnessLogged(t, dbh, host, mod, drivers, testLogger(t))
}

// benchHarness is newHarness logging as production does by default (info
// and above, formatted, then discarded): benchmarks count what logging
// costs without a terminal's, and without the debug lines -v turns on.
func benchHarness(t testing.TB, dbh *db.DB, mod func(*Config)) *harness {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return startHarnessLogged(t, dbh, "cond-a", mod, func(hw *hookedFake) StaticDrivers {
		return StaticDrivers{fake.HardwareType: hw}
	}, log)
}

func startHarnessLogged(t testing.TB, dbh *db.DB, host string, mod func(*Config), drivers func(hw *hookedFake) StaticDrivers, log *slog.Logger) *harness {
	t.Helper()
	if dbh == nil {
		dbh = dbtest.Open(t, db.SQLite)
	}
	store := newStore(t, dbh)
	cfg := testConfig(host)
	if mod != nil {
		mod(&cfg)
	}
	hw := &hookedFake{Driver: fake.New(nil)}
	pinner := release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})
	svc, err := New(cfg, Deps{Store: store, Drivers: drivers(hw), Pinner: pinner, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hw.set(func(h *hookedFake) {
			if h.gate != nil {
				select {
				case <-h.gate:
				default:
					close(h.gate)
				}
			}
		})
		_ = svc.Stop(ctx)
	})
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(store.Registry(), pinner), rpc.LocalTransport{Server: svc.RPCServer()})
	router := rpc.NewRouter(svc.listConductors, 5, time.Hour)
	return &harness{t: t, dbh: dbh, store: store, svc: svc, hw: hw, api: rpc.ConductorAPI{Client: client, Router: router}}
}

// enroll creates a fake-hardware node through create_node.
func (h *harness) enroll(name string) *objects.Node {
	h.t.Helper()
	n := &objects.Node{Driver: fake.HardwareType, Name: &name}
	out, err := h.api.CreateNode(context.Background(), n)
	if err != nil {
		h.t.Fatalf("create_node %s: %v", name, err)
	}
	return out
}

// node reads a node from the database.
func (h *harness) node(uuid string) *objects.Node {
	h.t.Helper()
	n, err := h.store.GetNode(context.Background(), uuid)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// waitFor polls until cond holds for the node (5 s at most).
func (h *harness) waitFor(uuid, what string, cond func(n *objects.Node) bool) *objects.Node {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := h.node(uuid)
		if cond(n) {
			return n
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("node %s never reached %s: provision_state %q, power %v, last_error %v, reservation %v",
				uuid, what, n.ProvisionState, deref(n.PowerState), deref(n.LastError), deref(n.Reservation))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until the node rests in state with no lease held.
func (h *harness) waitState(uuid, state string) *objects.Node {
	h.t.Helper()
	return h.waitFor(uuid, state, func(n *objects.Node) bool { return n.ProvisionState == state && n.Reservation == nil })
}

// classOf returns the error class and HTTP code an RPC error carries.
func classOf(err error) (string, int) {
	var c rpc.Classed
	if errors.As(err, &c) {
		return c.ErrorClass(), c.HTTPCode()
	}
	return "", 0
}

type bunSelect = bun.SelectQuery
