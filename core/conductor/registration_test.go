package conductor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

func TestRegisteredName(t *testing.T) {
	tests := map[string]struct {
		host string
		port int
		want string
	}{
		"default port":          {host: "cond-1", port: 8089, want: "cond-1"},
		"other port":            {host: "cond-1", port: 8090, want: "cond-1:8090"},
		"in-process, no port":   {host: "cond-1", port: 0, want: "cond-1"},
		"IPv6 address and port": {host: "::1", port: 9000, want: "[::1]:9000"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RegisteredName(tc.host, tc.port); got != tc.want {
				t.Fatalf("RegisteredName(%q, %d) = %q, want %q", tc.host, tc.port, got, tc.want)
			}
		})
	}
}

// Start registers the conductor (row, hardware interfaces, plugin results,
// services row); the heartbeat advances updated_at; Stop takes it offline.
func TestRegistrationAndHeartbeat(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		h := newHarness(t, dbtest.Open(t, d), "cond-a:8090", func(c *Config) { c.Group = "Rack-1" })
		var row db.Conductor
		read := func() {
			if err := h.dbh.Bun().NewSelect().Model(&row).Where("? = ?", bun.Ident("hostname"), "cond-a:8090").Scan(ctx); err != nil {
				t.Fatal(err)
			}
		}
		read()
		if !row.Online || row.ConductorGroup != "rack-1" || len(row.Drivers) != 1 || row.Drivers[0] != "fake-hardware" || deref(row.Version) != "1.0" {
			t.Fatalf("conductors row: %+v", row)
		}
		hw, err := h.dbh.HardwareInterfaces(ctx, []string{"cond-a:8090"})
		if err != nil {
			t.Fatal(err)
		}
		type offer struct {
			iface, name string
			def         bool
		}
		var got []offer
		for _, r := range hw {
			if r.ConductorID != row.ID || r.HardwareType != "fake-hardware" {
				t.Fatalf("hardware interface row %+v", r)
			}
			got = append(got, offer{r.InterfaceType, r.InterfaceName, r.IsDefault})
		}
		want := []offer{{"bios", "fake", true}, {"bios", "no-bios", false}, {"boot", "fake", true}, {"console", "fake", false}, {"console", "no-console", true}, {"deploy", "direct", false}, {"deploy", "fake", true},
			{"firmware", "fake", true}, {"firmware", "no-firmware", false}, {"inspect", "agent", false}, {"inspect", "fake", true}, {"inspect", "no-inspect", false}, {"management", "fake", true},
			{"network", "noop", true}, {"power", "fake", true}, {"raid", "fake", false}, {"raid", "no-raid", true},
			{"rescue", "agent", false}, {"rescue", "no-rescue", true},
			{"storage", "noop", true}, {"vendor", "no-vendor", true}}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(offer{})); diff != "" {
			t.Fatalf("hardware interface rows (-want +got):\n%s", diff)
		}
		plugs, err := h.dbh.ConductorPlugins(ctx, "cond-a:8090")
		if err != nil || len(plugs) != 1 || plugs[0].HardwareType != "fake-hardware" || deref(plugs[0].Status) != "ok" {
			t.Fatalf("plugin rows: %+v, %v", plugs, err)
		}
		svcs, err := h.dbh.LiveServices(ctx, time.Minute)
		if err != nil || len(svcs) != 1 || svcs[0].Binary != db.BinaryConductor || svcs[0].Release != release.Current ||
			svcs[0].ServiceVersion != release.Default().Head().ServiceVersion {
			t.Fatalf("services rows: %+v, %v", svcs, err)
		}
		first := row.UpdatedAt.Time
		deadline := time.Now().Add(5 * time.Second)
		for read(); !row.UpdatedAt.Time.After(first); read() {
			if time.Now().After(deadline) {
				t.Fatal("heartbeat never advanced updated_at")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := h.svc.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		read()
		if row.Online {
			t.Fatal("stopped conductor still online")
		}
		if svcs, _ := h.dbh.LiveServices(ctx, time.Minute); len(svcs) != 0 {
			t.Fatalf("stopped conductor's service still live: %+v", svcs)
		}
	})
}

// Power-state sync runs through the conductor's adapters: an out-of-band
// change seen by the BMC reaches power_state (here after one confirming
// sync, power_state_sync_max_retries = 1).
func TestPowerSyncRecordsOutOfBandChange(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) {
		c.PowerSync.Interval, c.PowerSync.Spread = 50*time.Millisecond, 0
		c.PowerSyncMaxRetries = 1
	})
	ctx := context.Background()
	n := h.enroll("node-1")
	if err := h.api.ChangeNodePowerState(ctx, n, "power on", 0); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "power on", func(n *objects.Node) bool { return deref(n.PowerState) == "power on" && n.Reservation == nil })
	// Someone switches the server off behind Rivet's back.
	if err := h.hw.Driver.SetPowerState(ctx, pluginNode(n), plugins.PowerOff); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "power off recorded by the sync", func(n *objects.Node) bool { return deref(n.PowerState) == "power off" })
}

// Portgroups: update under the node's lease, refuse to delete one with
// ports, delete an empty one.
func TestPortgroups(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.node(h.enroll("node-1").UUID)
	pg := &objects.Portgroup{UUID: "40000000-0000-0000-0000-000000000001", NodeID: n.ID, StandalonePortsSupported: true,
		Extra: map[string]any{}, InternalInfo: map[string]any{}, Properties: map[string]any{}}
	if err := h.store.Create(ctx, pg); err != nil {
		t.Fatal(err)
	}
	mode := "802.3ad"
	pg.Mode = &mode
	out, err := h.api.UpdatePortgroup(ctx, n, pg)
	if err != nil || deref(out.Mode) != mode {
		t.Fatalf("update_portgroup = %+v, %v", out, err)
	}
	port, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:aa:bb:01", NodeID: n.ID, PortgroupID: &pg.ID})
	if err != nil {
		t.Fatal(err)
	}
	err = h.api.DestroyPortgroup(ctx, n, pg)
	if class, code := classOf(err); class != "PortgroupNotEmpty" || code != 400 {
		t.Fatalf("destroy non-empty portgroup: %v (%s %d)", err, class, code)
	}
	if err := h.api.DestroyPort(ctx, n, port); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DestroyPortgroup(ctx, n, pg); err != nil {
		t.Fatalf("destroy empty portgroup: %v", err)
	}
}

// A conductor that finds, at a heartbeat, the cluster finalized at a newer
// release than its code (it lost a race with another service's advance)
// calls TooOld, once, with the ServiceTooOld refusal.
func TestHeartbeatStopsBelowTheFinalizedRelease(t *testing.T) {
	dbh := dbtest.Open(t, db.SQLite)
	cfg := testConfig("cond-old")
	cfg.HeartbeatInterval = 20 * time.Millisecond
	tooOld := make(chan error, 4)
	svc, err := New(cfg, Deps{Store: newStore(t, dbh), Drivers: StaticDrivers{fake.HardwareType: &hookedFake{Driver: fake.New(nil)}},
		Pinner: release.NewPinner(release.Default(), release.Pin{}), Logger: testLogger(t), TooOld: func(err error) { tooOld <- err }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop(ctx) })
	fr, err := dbh.FinalizedRelease(ctx)
	if err != nil || fr == nil || fr.Release != release.Current || fr.ServiceVersion != release.Default().Head().ServiceVersion {
		t.Fatalf("Start did not advance the finalized release to HEAD: %+v, %v", fr, err)
	}
	if _, _, err := dbh.AdvanceFinalizedRelease(ctx, "9.9.0", 99); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-tooOld:
		var refused *release.ServiceTooOldError
		if !errors.As(err, &refused) || refused.Finalized.Release != "9.9.0" {
			t.Fatalf("TooOld(%v), want a *ServiceTooOldError at 9.9.0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the heartbeat never noticed the newer finalized release")
	}
	time.Sleep(5 * cfg.HeartbeatInterval)
	if n := len(tooOld); n != 0 {
		t.Fatalf("TooOld called %d more times", n)
	}
}
