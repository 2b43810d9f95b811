package upgrade

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
)

// dwell is how long the load runs after each step's change before the
// step's checks.
const dwell = 3 * time.Second

// pinMode is how the new release's services are pinned.
type pinMode int

const (
	// manualPins: pin_release_version names the old release, cleared with
	// SIGHUP at step 3 (Ironic's way).
	manualPins pinMode = iota
	// autoPins: pin_release_version = auto everywhere, never edited.
	autoPins
)

// scenario is one rolling upgrade run: where, how pinned, and what else
// happens during it.
type scenario struct {
	name    string
	dialect string // "postgresql" or "mysql"
	mode    pinMode
	// oldPlugins runs the first upgraded conductor with the old release's
	// driver plugins (in its plugin_dir) from step 1.1 until it is
	// restarted with the new ones after step 2.2: a plugin one release
	// older than its conductor.
	oldPlugins bool
	// faults kills a conductor with SIGKILL and restarts the database
	// after step 2.2, under load. It needs a database server of the test's
	// own (testenv.StartPostgresServer), never the shared one.
	faults bool
}

// scenarios are the runs of TestRollingUpgrade: manual and automatic
// pinning on both databases.
var scenarios = []scenario{
	{name: "manual/postgresql", dialect: "postgresql", mode: manualPins, oldPlugins: true},
	{name: "auto/postgresql", dialect: "postgresql", mode: autoPins, faults: true},
	{name: "manual/mysql", dialect: "mysql", mode: manualPins},
	{name: "auto/mysql", dialect: "mysql", mode: autoPins},
}

// run is one rolling upgrade of a deployment under load.
type run struct {
	t      *testing.T
	ctx    context.Context
	sc     scenario
	d      *deployment
	mode   pinMode
	old    *build
	cur    *build
	oldPin string // the pin naming the old release; "" when the table lacks it (old == new)
	oldMax version.Version
	newMax version.Version
	// finalSV is the service version the finalized-release watermark must
	// be at: the old release's until a new service stops pinning it.
	finalSV int
	rec     *recorder // the load's requests, per step
	c       *client   // the load's client: the old maximum microversion, the newest once unpinned
	probe   *client   // the checks' requests (some expect 406), not in the table
	f       *fleet
	l       *load
	began   time.Time
	prefix  string // of step names: the hop of a chain run
}

// TestRollingUpgrade walks the step table of seeds/000_… under load, once
// per scenario: manual and automatic pinning on PostgreSQL and MariaDB,
// one run with a plugin older than its conductor, one with a conductor
// killed and the database restarted.
func TestRollingUpgrade(t *testing.T) {
	requireUpgrade(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := newRun(t, sc)
			r.upgrade()
			r.finish()
		})
	}
}

// newRun builds (once), starts the old release's deployment, enrolls the
// fleet and starts the load.
func newRun(t *testing.T, sc scenario) *run {
	old, cur := builds(t)
	return newRunOf(t, sc, old, cur)
}

// newRunOf is newRun between two given builds.
func newRunOf(t *testing.T, sc scenario, old, cur *build) *run {
	r := &run{t: t, ctx: context.Background(), sc: sc, mode: sc.mode, old: old, cur: cur, rec: &recorder{}, began: time.Now(),
		oldPin: pinFor(old), oldMax: version.MustParse(old.info.APIMax), newMax: version.MustParse(cur.info.APIMax)}
	if r.oldPin == "" && old.info.ServiceVersion != cur.info.ServiceVersion {
		t.Fatalf("the release table has no release with the old binary's service version %d", old.info.ServiceVersion)
	}
	r.d = newDeployment(t, sc.dialect, sc.faults, old, cur)
	pin := ""
	if sc.mode == autoPins {
		pin = "auto"
	}
	r.rec.setVersion(r.oldMax.String())
	r.rec.begin("setup")
	start := time.Now()
	r.d.start(pin, redfishNodes, ipmiNodes)
	r.c = newClient(r.d.lb.url, r.oldMax.String(), r.rec)
	r.probe = newClient(r.d.lb.url, r.oldMax.String(), &recorder{})
	r.f = r.d.populate(r.ctx, r.c)
	t.Logf("deployment up at %s with %d nodes in %v", old.info.Release, len(r.f.all), time.Since(start).Round(time.Millisecond))
	r.l = startLoad(r.ctx, r.c, r.f)
	return r
}

func mustVersion(s string) version.Version { return version.MustParse(s) }

// pinFor is the pin_release_version value naming the old build's release
// in the working tree's release table.
func pinFor(old *build) string {
	rels := release.Default().Releases()
	for i := len(rels) - 1; i >= 0; i-- {
		if rels[i].ServiceVersion == old.info.ServiceVersion {
			return rels[i].Version
		}
	}
	return ""
}

// newPin is what the new release's services start with.
func (r *run) newPin() string {
	if r.mode == autoPins {
		return "auto"
	}
	return r.oldPin
}

// step begins a step of the table, makes its change, lets the load run
// for dwell, and checks what must hold.
func (r *run) step(name string, change func()) {
	r.t.Helper()
	name = r.prefix + name
	r.t.Logf("step %s", name)
	r.rec.begin(name)
	if change != nil {
		change()
	}
	time.Sleep(dwell)
	r.check(name)
}

// upgrade walks the steps: 0 schema, 1.x conductors, 2.x APIs, 3.x unpin
// (manual) or the automatic pin following the fleet, then the online data
// migrations.
func (r *run) upgrade() {
	r.step("0", r.dbsyncUpgrade)
	r.upgradeServices()
}

// upgradeServices is every step after 0.
func (r *run) upgradeServices() {
	d, old, cur := r.d, r.old, r.cur
	r.step("1.1", func() {
		if r.sc.oldPlugins {
			d.conductors[0].pluginDir = old.dir
		}
		d.conductors[0].replace(cur, r.newPin())
		if r.sc.oldPlugins {
			r.t.Logf("%s runs %s's driver plugins (%s)", d.conductors[0].name, old.info.Release, old.dir)
		}
	})
	r.step("1.2", func() { d.conductors[1].replace(cur, r.newPin()) })
	r.step("2.1", func() { d.apis[0].replace(cur, r.newPin()) })
	r.step("2.2", func() { d.apis[1].replace(cur, r.newPin()) })
	if r.sc.faults {
		// Every process runs the new release: the faults test its code
		// (the old release's API answers 500 when the database or a
		// conductor is unreachable; 0.1 is cut and stays so).
		r.step("kill -9", r.killConductor)
		r.step("db restart", r.restartDatabase)
	}
	if r.sc.oldPlugins {
		r.step("new plugins", func() {
			d.conductors[0].pluginDir = ""
			d.conductors[0].replace(cur, r.newPin())
		})
	}
	if r.mode == manualPins {
		r.step("3.1", func() { d.conductors[0].repin("") })
		r.step("3.2", func() { d.conductors[1].repin("") })
		r.step("3.3", func() { d.apis[0].repin("") })
		r.step("3.4", func() {
			d.apis[1].repin("")
			r.finalized()
			r.newestLoad()
		})
	} else {
		// pin_release_version = auto: nothing to edit. The pin dropped by
		// itself when the last old service stopped; that was the finalize.
		r.step("3 (auto)", func() {
			r.autoUnpinned(d.apis[1].stopped)
			r.finalized()
			r.newestLoad()
		})
	}
	r.step("migrate", r.onlineMigrations)
	r.step("done", nil)
}

// finalized checks that the finalized release is the new one now that no
// service is pinned (step 3: the first unpinned service finalized).
func (r *run) finalized() {
	t := r.t
	t.Helper()
	st := r.status()
	if !st.hasFinalized {
		return
	}
	if st.Finalized == nil || st.Finalized.ServiceVersion != r.cur.info.ServiceVersion {
		t.Fatalf("every service runs %s unpinned but the finalized release is %+v, want service version %d",
			r.cur.info.Release, st.Finalized, r.cur.info.ServiceVersion)
	}
}

// newestLoad moves the load to the newest microversion once every API
// serves it, and starts the workers of the resources that version serves.
func (r *run) newestLoad() {
	if r.newMax.Compare(r.oldMax) > 0 {
		r.l.useNewest(r.ctx, r.t, r.probe, r.newMax.String())
		return
	}
	// Nothing newer (right after a cut, HEAD speaks the release's API):
	// the load already speaks the newest version, and now also uses the
	// resources it serves, as after any unpin.
	r.l.startNewKinds(r.ctx)
}

// autoUnpinned waits until every API serves the new maximum by itself
// (pin_release_version = auto) and logs how long after the last old
// service stopped that took: one heartbeat of each service.
func (r *run) autoUnpinned(lastOldStopped time.Time) {
	t := r.t
	t.Helper()
	waitFor(t, 5*time.Second+heartbeatTimeout, "the automatic pin dropping on every API", func() bool {
		return !slices.ContainsFunc(r.d.apis, func(s *service) bool { return rootVersion(s.url()) != r.newMax.String() })
	})
	t.Logf("auto: every API serves API max %s %v after the last old service stopped",
		r.newMax, time.Since(lastOldStopped).Round(time.Millisecond))
}

// dbsyncUpgrade is step 0: with the new binary, `rivet upgrade check`
// must ask for the schema upgrade when there is one, then `rivet dbsync
// upgrade` applies it while the old release serves.
func (r *run) dbsyncUpgrade() {
	t := r.t
	st := r.status()
	res := r.d.rivet(r.cur, "upgrade", "check", "--json")
	schema := checkResult(t, res, "Database schema")
	if len(st.Schema.Pending) > 0 && (schema != "Failure" || res.code != 2) {
		t.Errorf("before dbsync upgrade, %d migrations pending: Database schema %s, exit %d; want Failure, exit 2", len(st.Schema.Pending), schema, res.code)
	}
	if len(st.Schema.Pending) == 0 && schema != "Success" {
		t.Errorf("no migration pending but Database schema is %s", schema)
	}
	t.Logf("before dbsync upgrade: %d schema migrations pending; upgrade check exit %d, Database schema %s", len(st.Schema.Pending), res.code, schema)
	r.d.rivet(r.cur, "dbsync", "upgrade").ok(t)
	if st := r.status(); len(st.Schema.Pending) > 0 {
		t.Errorf("after dbsync upgrade, still pending: %v", st.Schema.Pending)
	}
}

// onlineMigrations runs `rivet dbsync online-data-migrations` (new binary)
// until it exits 0.
func (r *run) onlineMigrations() {
	t := r.t
	for i := 0; ; i++ {
		res := r.d.rivet(r.cur, "dbsync", "online-data-migrations")
		if res.code == 0 {
			return
		}
		if res.code != 1 || i == 10 {
			t.Fatalf("rivet dbsync online-data-migrations: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	}
}

// anyOld reports whether a service still runs the old release's code (a
// lower service version than the new release's).
func (r *run) anyOld() bool {
	return slices.ContainsFunc(r.d.services(), func(s *service) bool { return s.b.info.ServiceVersion < r.cur.info.ServiceVersion })
}

// anyNew reports whether a service runs the new release.
func (r *run) anyNew() bool {
	return slices.ContainsFunc(r.d.services(), func(s *service) bool { return s.b == r.cur })
}

// expectedMax is the maximum microversion an API must serve now.
func (r *run) expectedMax(s *service) version.Version {
	switch {
	case s.b == r.old:
		return r.oldMax
	case s.pin == "auto" && r.anyOld():
		return r.oldMax
	case s.pin == "auto" || s.pin == "":
		return r.newMax
	}
	return r.oldMax // pinned to the old release
}

// check verifies what the seed says holds at a step: each API's maximum
// microversion (and so what the load balancer offers), new features
// refused until the fleet is new and unpinned, and `rivet upgrade status`
// and `check` telling the truth.
func (r *run) check(step string) {
	r.t.Helper()
	r.checkVersions(step)
	r.checkOldPlugins(step)
	r.checkStatus(step)
}

func (r *run) checkVersions(step string) {
	t := r.t
	t.Helper()
	want := map[string]bool{}
	for _, s := range r.d.apis {
		exp := r.expectedMax(s)
		want[exp.String()] = true
		// An auto pin follows the fleet at the next heartbeat: allow a few.
		start, limit := time.Now(), 5*time.Second+heartbeatTimeout
		got := rootVersion(s.url())
		for ; got != exp.String() && time.Since(start) < limit; got = rootVersion(s.url()) {
			time.Sleep(50 * time.Millisecond)
		}
		switch took := time.Since(start); {
		case got != exp.String():
			t.Fatalf("step %s: %s serves API max %q, want %s (waited %v)", step, s.name, got, exp, limit)
		case took > time.Second:
			t.Logf("step %s: %s reached API max %s after %v", step, s.name, exp, took.Round(time.Millisecond))
		}
	}
	// Through the load balancer: round robin reaches both APIs.
	for range 6 {
		if got := rootVersion(r.d.lb.url); !want[got] {
			t.Errorf("step %s: the load balancer served API max %q, want one of %v", step, got, keys(want))
		}
	}
	if r.newMax.Compare(r.oldMax) <= 0 || len(want) != 1 {
		return // nothing new, or APIs differ (step 3.3): no single answer
	}
	newOnly := r.newMax.String()
	served := want[newOnly]
	code := http.StatusNotAcceptable
	if served {
		code = http.StatusOK
	}
	pc := *r.probe
	pc.version = newOnly
	for range 4 {
		if _, err := pc.call(r.ctx, http.MethodGet, "/v1/nodes/"+r.f.nmi, nil, nil, code); err != nil {
			t.Errorf("step %s: a request at the new maximum %s: %v", step, newOnly, err)
		}
	}
	if served {
		r.checkEveryVersion(step, r.newMax)
	} else {
		r.checkEveryVersion(step, r.oldMax)
		r.checkFamilies(step)
	}
	for _, f := range features {
		v := version.MustParse(f.since)
		if v.Compare(r.oldMax) <= 0 || v.Compare(r.newMax) > 0 {
			continue // old news, or not in this release
		}
		fc := *r.probe
		fc.version = f.since
		if err := f.try(r.ctx, &fc, r.f.nmi, served); err != nil {
			t.Errorf("step %s: %s (API %s), want it %s: %v", step, f.name, f.since,
				map[bool]string{true: "served", false: "refused with 406"}[served], err)
		}
	}
}

// rootVersion is the "version" GET / reports, "" when it fails.
func rootVersion(base string) string {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + "/")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var doc struct {
		DefaultVersion struct {
			Version string `json:"version"`
		} `json:"default_version"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&doc) != nil {
		return ""
	}
	return doc.DefaultVersion.Version
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// upgradeStatus is the part of `rivet upgrade status --json` checked.
type upgradeStatus struct {
	Release  string       `json:"release"`
	Services []serviceRow `json:"services"`
	AutoPin  string       `json:"auto_pin"`
	// Finalized is the finalized-release watermark; hasFinalized says
	// whether the binary reports one at all.
	Finalized *struct {
		Release        string `json:"release"`
		ServiceVersion int    `json:"service_version"`
	} `json:"finalized_release"`
	hasFinalized bool
	Schema       struct {
		Pending []string `json:"pending"`
	} `json:"schema"`
	Migrations []struct {
		Name    string `json:"name"`
		Pending int    `json:"pending"`
	} `json:"online_migrations"`
}

// serviceRow is a service as `rivet upgrade status --json` shows it.
type serviceRow struct {
	Hostname       string  `json:"hostname"`
	Binary         string  `json:"binary"`
	Release        string  `json:"release"`
	ServiceVersion int     `json:"service_version"`
	Pin            *string `json:"pin"`
	Live           bool    `json:"live"`
}

// status runs `rivet upgrade status --json` with the new binary.
func (r *run) status() upgradeStatus {
	t := r.t
	t.Helper()
	res := r.d.rivet(r.cur, "upgrade", "status", "--json").ok(t)
	var st upgradeStatus
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || json.Unmarshal([]byte(res.stdout), &keys) != nil {
		t.Fatalf("upgrade status --json: %v\n%s", err, res.stdout)
	}
	_, st.hasFinalized = keys["finalized_release"]
	return st
}

// checkResult returns the outcome of one named check of `rivet upgrade
// check --json`.
func checkResult(t *testing.T, res rivetResult, name string) string {
	t.Helper()
	for _, c := range checkResults(t, res) {
		if c.Check == name {
			return c.Result
		}
	}
	t.Fatalf("upgrade check has no %q check:\n%s", name, res.stdout)
	return ""
}

type checkRow struct {
	Check   string `json:"check"`
	Result  string `json:"result"`
	Details string `json:"details"`
}

func checkResults(t *testing.T, res rivetResult) []checkRow {
	t.Helper()
	var rows []checkRow
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
		t.Fatalf("upgrade check --json (exit %d): %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	return rows
}

// checkStatus compares `rivet upgrade status` and `check` with the
// deployment as the test built it.
func (r *run) checkStatus(step string) {
	t := r.t
	t.Helper()
	st := r.status()
	live := 0
	for _, row := range st.Services {
		if row.Live {
			live++
		}
	}
	if live != len(r.d.services()) {
		t.Errorf("step %s: upgrade status shows %d live services, want %d", step, live, len(r.d.services()))
	}
	pinned := false
	for _, s := range r.d.services() {
		binary := db.BinaryAPI
		if s.kind == "conductor" {
			binary = db.BinaryConductor
		}
		i := slices.IndexFunc(st.Services, func(row serviceRow) bool {
			return row.Hostname == s.registered && row.Binary == binary
		})
		if i < 0 {
			t.Errorf("step %s: upgrade status does not list %s (%s %s)", step, s.name, binary, s.registered)
			continue
		}
		row := st.Services[i]
		if !row.Live || row.Release != s.b.info.Release || deref(row.Pin) != s.pin {
			t.Errorf("step %s: upgrade status shows %s live=%v release %q pin %q; want live, %q, pin %q",
				step, s.name, row.Live, row.Release, deref(row.Pin), s.b.info.Release, s.pin)
		}
		pinned = pinned || (s.pin != "" && s.pin != "auto")
	}
	r.checkWatermark(step, st)
	head := release.Default().Head().Label()
	if old := r.anyOld(); old && st.AutoPin == head || !old && st.AutoPin != head {
		t.Errorf("step %s: upgrade status: auto would resolve to %q while old services run: %v", step, st.AutoPin, old)
	}

	res := r.d.rivet(r.cur, "upgrade", "check", "--json")
	want := map[string]string{
		"Database schema":  "Success",
		"Object versions":  "Success",
		"Service versions": map[bool]string{true: "Warning", false: "Success"}[r.anyOld() && r.anyNew()],
		"Release pins":     map[bool]string{true: "Warning", false: "Success"}[!r.anyOld() && pinned],
	}
	pending := false
	for _, m := range st.Migrations {
		pending = pending || m.Pending > 0
	}
	want["Online data migrations"] = map[bool]string{true: "Warning", false: "Success"}[pending]
	worst := 0
	for _, c := range checkResults(t, res) {
		code := map[string]int{"Success": 0, "Warning": 1, "Failure": 2}[c.Result]
		worst = max(worst, code)
		if w, ok := want[c.Check]; ok && w != c.Result || !ok && c.Result == "Failure" {
			t.Errorf("step %s: upgrade check %q: %s (%s), want %s", step, c.Check, c.Result, c.Details, w)
		}
	}
	if res.code != worst {
		t.Errorf("step %s: upgrade check exited %d, its worst result calls for %d", step, res.code, worst)
	}
	if testingVerbose() {
		t.Logf("step %s: upgrade check exit %d\n%s", step, res.code, strings.TrimSpace(res.stdout))
	}
}

func testingVerbose() bool { return testing.Verbose() }

// unpinnedNew reports whether a service runs the new release unpinned:
// it writes the new release's versions, so the watermark is the new
// release's.
func (r *run) unpinnedNew() bool {
	return slices.ContainsFunc(r.d.services(), func(s *service) bool {
		return s.b == r.cur && (s.pin == "" || s.pin == "auto" && !r.anyOld())
	})
}

// checkWatermark checks the finalized release `rivet upgrade status`
// shows: the old release's service version while every service runs or
// pins the old release, the new one's once a new service runs unpinned,
// and never lower afterwards.
func (r *run) checkWatermark(step string, st upgradeStatus) {
	t := r.t
	t.Helper()
	if !st.hasFinalized {
		return // a release before the watermark
	}
	if r.finalSV == 0 {
		r.finalSV = r.old.info.ServiceVersion
	}
	if r.unpinnedNew() {
		r.finalSV = r.cur.info.ServiceVersion
	}
	switch {
	case st.Finalized == nil && r.old.info.Release == r.cur.info.Release:
		t.Errorf("step %s: upgrade status shows no finalized release", step)
	case st.Finalized == nil:
		// The old release may predate the watermark; the new one sets it
		// as soon as one of its services starts.
		if slices.ContainsFunc(r.d.services(), func(s *service) bool { return s.b == r.cur }) {
			t.Errorf("step %s: a new service runs but upgrade status shows no finalized release", step)
		}
	case st.Finalized.ServiceVersion != r.finalSV:
		t.Errorf("step %s: finalized release %s (service version %d), want service version %d",
			step, st.Finalized.Release, st.Finalized.ServiceVersion, r.finalSV)
	}
}
