package upgrade

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rivetmetal/rivet/db"
)

// finish stops the load and checks the end state: no failed request,
// every acknowledged write readable, every node at rest in the state it
// was left in, every row at the new release's object versions, every
// process gone. It prints the per-step table.
func (r *run) finish() {
	t := r.t
	t.Helper()
	r.l.awaitNewKinds(t)
	r.l.stopLoad()
	r.rec.end()
	var table, kinds strings.Builder
	r.rec.table(&table)
	r.rec.kindTable(&kinds)
	t.Logf("requests through the load balancer per step (%d acknowledged writes, %d power/deploy/port cycles):\n%s",
		r.l.writes.Load(), r.l.cycles.Load(), table.String())
	t.Logf("requests through the load balancer per kind:\n%s", kinds.String())
	_, _, errs := r.rec.totals()
	if len(r.rec.failures) > 40 {
		t.Errorf("failed requests by kind:\n%s", failureKinds(r.rec.failures))
	}
	for i, f := range r.rec.failures {
		if i == 40 {
			t.Errorf("… and %d more failures", len(r.rec.failures)-i)
			break
		}
		t.Errorf("failed request: %s", f)
	}
	if errs != len(r.rec.failures) {
		t.Errorf("%d errors counted, %d described", errs, len(r.rec.failures))
	}
	reader := *r.probe
	reader.version = r.newMax.String()
	markers, fields := r.l.verifyWrites(t, r.ctx, &reader)
	t.Logf("read back %d acknowledged markers and %d new fields (last acknowledged values of %d field writes at API %s) on %d nodes",
		markers, fields, r.l.fieldWrites.Load(), reader.version, len(r.l.acked))
	if n := r.l.verifyNewKinds(t, r.ctx, &reader); n == 0 && r.newMax.Compare(r.oldMax) > 0 {
		t.Errorf("the load moved to API %s but acknowledged no write of the new resources", r.newMax)
	}
	if r.newMax.Compare(r.oldMax) > 0 && r.l.choices.Load() != nil && r.l.fieldWrites.Load() == 0 {
		t.Errorf("the load moved to API %s but acknowledged no write of its new fields", r.newMax)
	}
	for i, e := range r.rec.explained {
		if i == 10 {
			t.Logf("… and %d more", len(r.rec.explained)-i)
			break
		}
		t.Logf("not acknowledged during a fault (not an error): %s", e)
	}
	r.summarize(markers, fields)
	r.checkAtRest()
	r.checkObjectVersions(r.cur.info.Objects)
	r.d.stopAll()
}

// finalStates is the provision state every node must end in: the one it
// was enrolled into (deploy cycles end undeployed).
func (r *run) finalStates() map[string]string {
	out := map[string]string{}
	for _, s := range r.d.specs() {
		out[s.name] = s.state
	}
	return out
}

// checkAtRest waits (a lease or a power sync may be finishing) until no
// node is in a transient state, has a target or is leased, and each is in
// its expected state.
func (r *run) checkAtRest() {
	t := r.t
	t.Helper()
	want := r.finalStates()
	var problems []string
	deadline := time.Now().Add(20 * time.Second)
	for {
		problems = r.restProblems(want)
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, p := range problems {
		t.Errorf("not at rest after the load: %s", p)
	}
}

func (r *run) restProblems(want map[string]string) []string {
	var rows []struct {
		Name                 string     `bun:"name"`
		ProvisionState       string     `bun:"provision_state"`
		TargetProvisionState *string    `bun:"target_provision_state"`
		TargetPowerState     *string    `bun:"target_power_state"`
		Reservation          *string    `bun:"reservation"`
		ReservationExpiresAt *time.Time `bun:"reservation_expires_at"`
	}
	err := r.d.dbh.Bun().NewSelect().Table(db.TableNodes).
		Column("name", "provision_state", "target_provision_state", "target_power_state", "reservation", "reservation_expires_at").
		Scan(r.ctx, &rows)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	if len(rows) != len(want) {
		out = append(out, fmt.Sprintf("%d nodes in the database, want %d", len(rows), len(want)))
	}
	for _, n := range rows {
		var bad []string
		if n.ProvisionState != want[n.Name] {
			bad = append(bad, fmt.Sprintf("provision_state %q, want %q", n.ProvisionState, want[n.Name]))
		}
		if n.TargetProvisionState != nil {
			bad = append(bad, "target_provision_state "+*n.TargetProvisionState)
		}
		if n.TargetPowerState != nil {
			bad = append(bad, "target_power_state "+*n.TargetPowerState)
		}
		if n.Reservation != nil || n.ReservationExpiresAt != nil {
			bad = append(bad, fmt.Sprintf("leased by %q until %v", deref(n.Reservation), n.ReservationExpiresAt))
		}
		if len(bad) > 0 {
			out = append(out, n.Name+": "+strings.Join(bad, ", "))
		}
	}
	return out
}

// checkObjectVersions checks, with SQL, that every row of every object
// table carries the version want lists for its kind, and that each table
// has rows.
func (r *run) checkObjectVersions(want map[string]string) {
	t := r.t
	t.Helper()
	for kind, table := range db.ObjectTables() {
		var rows []struct {
			Version *string `bun:"version"`
			N       int     `bun:"n"`
		}
		err := r.d.dbh.Bun().NewSelect().Table(table).ColumnExpr("version").ColumnExpr("COUNT(*) AS n").GroupExpr("version").Scan(r.ctx, &rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			if why := r.noRowsWhy(kind, want); why != "" {
				t.Logf("table %s has no rows: %s", table, why)
				continue
			}
			t.Errorf("table %s has no rows: its object versions are not exercised", table)
		}
		for _, row := range rows {
			if got := deref(row.Version); got != want[kind] {
				t.Errorf("table %s: %d rows at version %q, want %s %s", table, row.N, got, kind, want[kind])
			}
		}
	}
}

// stopAll stops every service gracefully (each must exit 0 and take its
// plugins with it), then HAProxy and the simulator, and checks that every
// process the test started has been reaped and no plugin process is left.
func (d *deployment) stopAll() {
	t := d.t
	t.Helper()
	for _, s := range slices.Concat(d.apis, d.conductors) {
		s.stop()
	}
	for _, p := range []*proc{d.lb.p, d.sim} {
		if _, timedOut := p.stop(10 * time.Second); timedOut {
			t.Errorf("%s did not exit within 10s of SIGTERM", p.name)
		}
	}
	for _, p := range d.procs {
		if !p.exited() {
			t.Errorf("%s (pid %d) still running", p.name, p.pid())
		}
	}
	if len(d.plugins) == 0 {
		t.Error("no plugin process was ever seen under a conductor")
	}
	for _, id := range d.plugins {
		if id.alive() {
			t.Errorf("plugin %s outlived its conductor; killing it", id)
			_ = syscall.Kill(id.pid, syscall.SIGKILL)
		}
	}
	t.Logf("%d processes and %d plugin processes started; all gone", len(d.procs), len(d.plugins))
}

// failureKinds counts failures by step, method and outcome (UUIDs and
// numbers taken out).
func failureKinds(failures []string) string {
	counts := map[string]int{}
	for _, f := range failures {
		k := uuidRE.ReplaceAllString(f, "…")
		if i := strings.Index(k, ": {"); i > 0 {
			k = k[:i]
		}
		counts[k]++
	}
	var lines []string
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("%6d  %.200s", n, k))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4,}`)

// noRowsWhy says why kind's table may be empty at a check against want
// ("" when it must have rows): the release checked against has no such
// kind (a rollback's check at the old release), the load reaches it only
// at a microversion above the newest it speaks (HEAD's advertised
// maximum), or no driver of the run has made a row (BIOS settings and
// firmware components: none read back from rivet-sim).
func (r *run) noRowsWhy(kind string, want map[string]string) string {
	if _, ok := want[kind]; !ok {
		return fmt.Sprintf("the release checked has no %s", kind)
	}
	since, ok := rowsMadeAt(kind)
	switch {
	case kind == "BIOSSetting":
		if nk := r.l.nk.Load(); nk == nil || nk.biosSettings.Load() == 0 {
			return "no BIOS setting was read from any node: no driver of this run caches BIOS settings"
		}
	case kind == "FirmwareComponent":
		if nk := r.l.nk.Load(); nk == nil || nk.firmwareComponents.Load() == 0 {
			return "no firmware component was read from any node: the conductor caches them when it verifies, cleans or inspects a node, and the load's redfish nodes were enrolled before the upgrade"
		}
	case !ok:
		return "" // a kind the load does not know: an error, so it gets added
	case since != "" && !r.l.usesKind(kind):
		return "the load uses it only once every service runs the new release unpinned"
	case since != "" && !r.l.serves(since):
		return fmt.Sprintf("the load creates %s at API %s, above the newest it speaks (%s)", kind, since, r.l.c.ver())
	}
	return ""
}
