package conductor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

func withHistory(c *Config) {
	c.History = HistoryConfig{Enabled: true, MaxEntries: 300, CleanupBatch: 1000}
}

// history returns the node's entries, oldest first.
func (h *harness) history(n *objects.Node) []*objects.NodeHistory {
	h.t.Helper()
	objs, err := h.store.LoadAll(context.Background(), "NodeHistory", func(q *bunSelect) *bunSelect {
		return q.Where("node_id = ?", n.ID).OrderExpr("id")
	})
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]*objects.NodeHistory, len(objs))
	for i, o := range objs {
		out[i] = o.(*objects.NodeHistory)
	}
	return out
}

// find returns the first entry whose event contains text, or nil.
func find(es []*objects.NodeHistory, text string) *objects.NodeHistory {
	for _, e := range es {
		if strings.Contains(deref(e.Event), text) {
			return e
		}
	}
	return nil
}

// Transitions and failures are recorded by the conductor that saw them,
// with the request id of the call that caused them.
func TestHistoryRecordsTransitionsAndFailures(t *testing.T) {
	h := newHarness(t, nil, "cond-a", withHistory)
	ctx := rpc.WithUser(rpc.WithRequestID(context.Background(), "req-5e1f"), "alice")
	n := h.enroll("node-1")
	if err := h.api.DoProvisioningAction(ctx, n, "manage"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	es := h.history(n)
	e := find(es, `from "enroll" to "verifying"`)
	if e == nil {
		t.Fatalf("no verifying transition in %v", events(es))
	}
	if deref(e.Severity) != "INFO" || deref(e.EventType) != "provisioning" || deref(e.Conductor) != "cond-a" ||
		!strings.HasSuffix(deref(e.Event), "(request req-5e1f)") || e.UUID == "" || deref(e.UserName) != "alice" {
		t.Fatalf("entry %+v", e)
	}
	if find(es, `to "manageable"`) == nil {
		t.Fatalf("no manageable transition in %v", events(es))
	}

	// A failing power action: its last_error is an ERROR entry, type power.
	h.hw.set(func(f *hookedFake) { f.failPower = errors.New("BMC says no") })
	if err := h.api.ChangeNodePowerState(ctx, n, "power off", 0); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "a recorded failure", func(n *objects.Node) bool { return n.LastError != nil && n.Reservation == nil })
	e = find(h.history(n), "BMC says no")
	if e == nil || deref(e.Severity) != "ERROR" || deref(e.EventType) != "power" {
		t.Fatalf("power failure entry %+v in %v", e, events(h.history(n)))
	}
	// A successful one: the power transition.
	h.hw.set(func(f *hookedFake) { f.failPower = nil })
	if err := h.api.ChangeNodePowerState(ctx, n, "power on", 0); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "power on", func(n *objects.Node) bool { return deref(n.PowerState) == "power on" && n.Reservation == nil })
	if find(h.history(n), `Power state changed from "power off" to "power on"`) == nil &&
		find(h.history(n), `to "power on"`) == nil {
		t.Fatalf("no power transition in %v", events(h.history(n)))
	}

	// Destroying the node takes its history with it.
	if err := h.api.DestroyNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if es := h.history(n); len(es) != 0 {
		t.Fatalf("%d entries left after destroy_node", len(es))
	}
}

func events(es []*objects.NodeHistory) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = deref(e.Severity) + " " + deref(e.EventType) + ": " + deref(e.Event)
	}
	return out
}

// A takeover is recorded, and so is the power action the dead conductor
// left unfinished (it used to vanish: target cleared, last_error empty).
func TestHistoryRecordsTakeoverAndInterruptedPower(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		h := newHarness(t, dbtest.Open(t, d), "cond-b", withHistory)
		registerPeer(t, h.dbh, "dead-a", []string{"fake-hardware"}, true)
		n := newNode(t, h.store, "active")
		n.TargetPowerState = ptr("power off")
		if err := h.store.Save(ctx, n); err != nil {
			t.Fatal(err)
		}
		if _, err := h.dbh.AcquireLease(ctx, n.UUID, "dead-a", time.Hour); err != nil {
			t.Fatal(err)
		}
		if got := h.svc.checkOrphans(ctx); got != 1 {
			t.Fatalf("checkOrphans recovered %d nodes, want 1", got)
		}
		got := h.node(n.UUID)
		if got.TargetPowerState != nil || !strings.Contains(deref(got.LastError), `Power action "power off"`) {
			t.Fatalf("after takeover: target %v, last_error %q", got.TargetPowerState, deref(got.LastError))
		}
		es := h.history(n)
		took := find(es, "took over node")
		lost := find(es, "was interrupted when conductor dead-a stopped")
		if took == nil || deref(took.EventType) != "takeover" || deref(took.Severity) != "INFO" || deref(took.Conductor) != "cond-b" {
			t.Fatalf("takeover entry %+v in %v", took, events(es))
		}
		if lost == nil || deref(lost.EventType) != "takeover" || deref(lost.Severity) != "ERROR" || deref(lost.Conductor) != "cond-b" ||
			!strings.Contains(deref(lost.Event), "request the power action again") {
			t.Fatalf("interrupted power entry %+v in %v", lost, events(es))
		}
	})
}

// Pinned to a release without NodeHistory, nothing is written: its
// services could not show it.
func TestHistoryNotWrittenWhilePinned(t *testing.T) {
	dbh := dbtest.Open(t, db.SQLite)
	store := newStore(t, dbh)
	n := newNode(t, store, "enroll")
	tbl := release.Default()
	pin, err := tbl.ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	pinned := &historyRecorder{cfg: HistoryConfig{Enabled: true, MaxEntries: 10}, store: store,
		pinner: release.NewPinner(tbl, pin), host: "cond-a", log: testLogger(t)}
	pinned.record(context.Background(), n, severityError, eventPower, "pinned", "", "")
	latest := *pinned
	latest.pinner = release.NewPinner(tbl, release.Pin{Mode: release.PinLatest})
	latest.record(context.Background(), n, severityError, eventPower, "latest", "", "")
	off := latest
	off.cfg.Enabled = false
	off.record(context.Background(), n, severityError, eventPower, "disabled", "", "")
	h := &harness{t: t, store: store}
	if got := events(h.history(n)); len(got) != 1 || !strings.HasSuffix(got[0], ": latest") {
		t.Fatalf("entries %v, want only the unpinned one", got)
	}
}

// The clean-up keeps the newest node_history_max_entries per node, at
// most node_history_cleanup_batch_count deleted per run.
func TestHistoryCleanup(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		h := newHarness(t, dbtest.Open(t, d), "cond-a", func(c *Config) {
			withHistory(c)
			c.History.MaxEntries, c.History.CleanupBatch = 2, 3
		})
		ctx := context.Background()
		a, b := newNode(t, h.store, "enroll"), newNode(t, h.store, "enroll")
		for i := range 5 {
			h.svc.tasks.history.record(ctx, a, severityInfo, eventProvisioning, fmt.Sprintf("a%d", i), "", "")
			h.svc.tasks.history.record(ctx, b, severityInfo, eventProvisioning, fmt.Sprintf("b%d", i), "", "")
		}
		if n := h.svc.pruneHistory(ctx); n != 3 {
			t.Fatalf("first run deleted %d, want the batch of 3", n)
		}
		if n := h.svc.pruneHistory(ctx); n != 3 {
			t.Fatalf("second run deleted %d, want 3", n)
		}
		for _, tc := range []struct {
			n    *objects.Node
			want []string
		}{{a, []string{"a3", "a4"}}, {b, []string{"b3", "b4"}}} {
			es := h.history(tc.n)
			if len(es) != 2 || deref(es[0].Event) != tc.want[0] || deref(es[1].Event) != tc.want[1] {
				t.Fatalf("kept %v, want %v", events(es), tc.want)
			}
		}
	})
}

// A failed deploy and a power sync failure are recorded as ERROR entries
// by the conductor that saw them; the deploy's with the request id of the
// call that started it. Both deploys (one failed, one succeeded) are
// observed in rivet_conductor_provision_duration_seconds.
func TestHistoryRecordsDeployAndPowerSyncFailures(t *testing.T) {
	var drv *getPowerFailing
	h := startHarness(t, nil, "cond-a", func(c *Config) {
		withHistory(c)
		c.PowerSyncMaxRetries = 1
		c.PowerSync.Spread, c.PowerSync.Breaker.Threshold = 0, 0
	}, func(hw *hookedFake) StaticDrivers {
		drv = &getPowerFailing{hookedFake: hw}
		return StaticDrivers{fake.HardwareType: drv}
	})
	ctx := rpc.WithRequestID(context.Background(), "req-d3f1")
	n := h.available("node-1")
	h.hw.set(func(f *hookedFake) { f.failDeploy = errors.New("image checksum mismatch") })
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "deploy failed", func(n *objects.Node) bool { return n.ProvisionState == "deploy failed" && n.Reservation == nil })
	es := h.history(n)
	e := find(es, "image checksum mismatch")
	if e == nil || deref(e.Severity) != "ERROR" || deref(e.Conductor) != "cond-a" || !strings.HasSuffix(deref(e.Event), "(request req-d3f1)") {
		t.Fatalf("deploy failure entry %+v in %v", e, events(es))
	}
	if e := find(es, `to "deploy failed"`); e == nil || !strings.HasSuffix(deref(e.Event), "(request req-d3f1)") {
		t.Fatalf("no deploy failed transition with the request id in %v", events(es))
	}
	h.hw.set(func(f *hookedFake) { f.failDeploy = nil })
	if err := h.api.DoNodeDeploy(ctx, n, true, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "active")
	m := h.svc.metrics.provision
	if got := histogramCount(t, m, "deploy", "failure"); got != 1 {
		t.Errorf("failed deploys observed: %v, want 1", got)
	}
	if got := histogramCount(t, m, "deploy", "success"); got != 1 {
		t.Errorf("successful deploys observed: %v, want 1", got)
	}

	drv.setFail(errors.New("BMC unreachable"))
	if _, err := h.svc.psync.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "the sync failure recorded", func(n *objects.Node) bool { return n.LastError != nil && n.Reservation == nil })
	es = h.history(n)
	e = find(es, "Power state sync failed")
	if e == nil || deref(e.Severity) != "ERROR" || deref(e.EventType) != "monitoring" || deref(e.Conductor) != "cond-a" {
		t.Fatalf("power sync failure entry %+v in %v", e, events(es))
	}
}

// histogramCount is one histogram series' sample count.
func histogramCount(t *testing.T, h *prometheus.HistogramVec, labels ...string) uint64 {
	t.Helper()
	var out dto.Metric
	if err := h.WithLabelValues(labels...).(prometheus.Metric).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetHistogram().GetSampleCount()
}
