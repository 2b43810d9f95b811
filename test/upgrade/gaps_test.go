package upgrade

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/db"
)

// The gaps of issue 23: each test runs the upgrade's step where the gap
// is, with real binaries of the plan's newest upgrade that raises the
// service version (gapBuilds), and checks what must hold whichever way
// the gap is closed (a refusal or a cap), strictly about the data.

// TestGapA_OnlineMigrationsWhilePinned: every service runs the new
// release but is still pinned to the old one (step 2.2, manual pins). The
// online data migrations would write rows at the new object versions that
// the pinned services, and a rollback, cannot take: `rivet dbsync
// online-data-migrations` must exit 2 and change no row while any live
// service or configured pin is below the release that needs them; once
// every service is unpinned it runs to completion.
func TestGapA_OnlineMigrationsWhilePinned(t *testing.T) {
	old, cur, pin := gapBuilds(t)
	d := newMini(t, old, cur)
	d.rivet(cur, "dbsync", "upgrade").ok(t)
	cond := d.add("conductor", cur, pin)
	api := d.add("api", cur, pin)
	c := newClient(api.url(), old.info.APIMax, &recorder{})
	node := createNode(t, c, "gap-a")
	before := nodeVersions(t, d)
	if pending := pendingMigrations(t, d, cur); pending == 0 {
		t.Skipf("%s → %s has no online data migration pending over a %s row", old.info.Release, cur.info.Release, old.info.Release)
	}
	res := d.rivet(cur, "dbsync", "online-data-migrations")
	if res.code != 2 {
		t.Errorf("online-data-migrations with every service pinned to %s: exit %d, want 2 (refused)\nstdout:\n%s\nstderr:\n%s",
			pin, res.code, res.stdout, res.stderr)
	} else if out := res.stdout + res.stderr; !strings.Contains(out, "pin") && !strings.Contains(out, "rivet-") {
		t.Errorf("online-data-migrations refused without naming the pins or the services that hold it back:\n%s", out)
	}
	if after := nodeVersions(t, d); !slices.Equal(before, after) {
		t.Errorf("node rows went from versions %v to %v while every service pinned %s", before, after, pin)
	}
	// The pinned services still read and write the node.
	if _, err := c.call(context.Background(), http.MethodPatch, "/v1/nodes/"+node,
		[]map[string]any{{"op": "add", "path": "/extra/after", "value": "a"}}, nil, http.StatusOK); err != nil {
		t.Errorf("a pinned API after the refused migrations: %v", err)
	}
	// Unpinned (step 3), the migrations run.
	cond.repin("")
	api.repin("")
	for i := 0; ; i++ {
		res = d.rivet(cur, "dbsync", "online-data-migrations")
		if res.code == 0 {
			break
		}
		if res.code != 1 || i == 10 {
			t.Fatalf("online-data-migrations with every service unpinned: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	}
	d.stopAllMini()
}

// TestGapB_AutoMissedHeartbeats: with pin_release_version = auto, the old
// services (a conductor and an API) are only stopped (SIGSTOP: a hung
// host, a paused VM) and miss their heartbeats for longer than
// heartbeat_timeout. They have not gone away: they resume and write at the
// old versions. The new services must not drop the automatic pin
// meanwhile, and the finalized release must not advance; the old services,
// resumed, keep running and still read and write every node.
func TestGapB_AutoMissedHeartbeats(t *testing.T) {
	old, cur, _ := gapBuilds(t)
	d := newMini(t, old, cur)
	oldCond := d.add("conductor", old, "auto")
	oldAPI := d.add("api", old, "auto")
	d.rivet(cur, "dbsync", "upgrade").ok(t)
	d.add("conductor", cur, "auto")
	api := d.add("api", cur, "auto")
	oldMax := old.info.APIMax
	c := newClient(api.url(), oldMax, &recorder{})
	createNode(t, c, "gap-b")
	fin := finalizedSV(t, d)
	if got := rootVersion(api.url()); got != oldMax {
		t.Fatalf("auto-pinned API beside a live %s conductor serves API max %s, want %s", old.info.Release, got, oldMax)
	}
	// Both old services stop, as on a paused host.
	for _, s := range []*service{oldCond, oldAPI} {
		if err := s.p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	stopped := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			for _, s := range []*service{oldCond, oldAPI} {
				_ = s.p.cmd.Process.Signal(syscall.SIGCONT)
			}
		}
	}
	defer resume()
	// A heartbeat timeout and ten seconds: every new service has
	// heartbeated (every second) ten times with the old one's row expired.
	for time.Since(stopped) < heartbeatTimeout+10*time.Second {
		if got := rootVersion(api.url()); got != oldMax {
			t.Errorf("%v after SIGSTOP of the old services, the auto-pinned API serves API max %q, want %s (still pinned: the old services only stopped)",
				time.Since(stopped).Round(time.Second), got, oldMax)
			break
		}
		if sv := finalizedSV(t, d); sv != fin {
			t.Errorf("%v after SIGSTOP of the old services, the finalized release moved from service version %d to %d",
				time.Since(stopped).Round(time.Second), fin, sv)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	resume()
	time.Sleep(3 * time.Second)
	for _, s := range []*service{oldCond, oldAPI} {
		if s.p.exited() {
			t.Errorf("the old %s, resumed after %v, exited: %v\n%s", s.kind, heartbeatTimeout+10*time.Second, s.p.err, tail(s.p.log.String(), 10))
		}
	}
	// The old binary still reads and writes every node: nothing was
	// written at versions it cannot read (no 500 from the old release).
	if !oldAPI.p.exited() {
		oc := newClient(oldAPI.url(), oldMax, &recorder{})
		ctx := context.Background()
		if _, err := oc.call(ctx, http.MethodGet, "/v1/nodes/detail", nil, nil, http.StatusOK); err != nil {
			t.Errorf("the old API after the stop: %v", err)
		}
		if _, err := oc.call(ctx, http.MethodPatch, "/v1/nodes/gap-b",
			[]map[string]any{{"op": "add", "path": "/extra/resumed", "value": "yes"}}, nil, http.StatusOK); err != nil {
			t.Errorf("the old API after the stop: %v", err)
		}
	}
	d.stopAllMini()
}

// TestGapC_APIUnpinnedBeforeConductors: a conductor is still pinned to the
// old release (step 3.2 not done) when an API runs the new release
// unpinned, started so or unpinned with SIGHUP. The conductor would write
// the node at the old object version, dropping the fields only the new
// microversion has. The API must never answer 200 to such a write unless
// the value is kept: it serves only the old maximum (406), refuses the
// write, or refuses to start or to unpin. Never a 500.
func TestGapC_APIUnpinnedBeforeConductors(t *testing.T) {
	old, cur, pin := gapBuilds(t)
	if cur.info.APIMax == old.info.APIMax {
		t.Skipf("%s and %s serve the same maximum microversion %s: no new field to drop", old.info.Release, cur.info.Release, cur.info.APIMax)
	}
	d := newMini(t, old, cur)
	d.rivet(cur, "dbsync", "upgrade").ok(t)
	d.add("conductor", cur, pin)
	pinned := d.add("api", cur, pin)
	pc := newClient(pinned.url(), old.info.APIMax, &recorder{})
	node := createNode(t, pc, "gap-c")

	for _, how := range []string{"started unpinned", "unpinned with SIGHUP"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			var api *service
			switch how {
			case "started unpinned":
				api = d.newService("api", cur, "")
				if refused, out := api.startRefused(30 * time.Second); refused {
					t.Logf("the unpinned API refused to start beside a pinned conductor (accepted): %s", lastLine(out))
					return
				}
			default:
				api = d.add("api", cur, pin)
				api.pin = ""
				api.writeConfig()
				if err := api.p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
				time.Sleep(3 * time.Second) // a reload, and a heartbeat or two
			}
			defer api.stop()
			gapCWrite(t, d, api, cur.info.APIMax, old.info.APIMax, node)
		})
	}
	d.stopAllMini()
}

// gapCWrite writes a field only the new microversion has through api and
// checks the outcome: refused (406 or another 4xx/503), or 200 with the
// value read back through the API and kept in the database row.
func gapCWrite(t *testing.T, d *deployment, api *service, newMax, oldMax, node string) {
	t.Helper()
	ctx := context.Background()
	served := rootVersion(api.url())
	c := newClient(api.url(), newMax, &recorder{})
	var drv map[string]any
	status, err := c.call(ctx, http.MethodGet, "/v1/drivers/fake-hardware", nil, &drv, http.StatusOK, http.StatusNotAcceptable)
	if err != nil {
		t.Fatalf("GET a driver at %s: %v", newMax, err)
	}
	if status == http.StatusNotAcceptable {
		if served != oldMax {
			t.Errorf("the API refuses %s with 406 but GET / says it serves %s", newMax, served)
		}
		t.Logf("the API serves only %s beside the pinned conductor (accepted: capped)", served)
		return
	}
	field, value := newFieldValue(t, drv)
	patch := []map[string]any{{"op": "replace", "path": "/" + field, "value": value}}
	status, data, err := rawCall(ctx, c, http.MethodPatch, "/v1/nodes/"+node, patch)
	switch {
	case err != nil:
		t.Fatalf("PATCH %s at %s: %v", field, newMax, err)
	case status >= 500 && status != http.StatusServiceUnavailable:
		t.Fatalf("PATCH %s at %s beside a pinned conductor: HTTP %d, want a refusal (4xx or 503) or 200 with the value kept: %.300s",
			field, newMax, status, data)
	case status != http.StatusOK:
		t.Logf("PATCH %s at %s beside a pinned conductor refused with %d (accepted): %.200s", field, newMax, status, data)
		return
	}
	var n map[string]any
	if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, &n, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	var stored *string
	if err := d.dbh.Bun().NewSelect().Table(db.TableNodes).Column(field).Where("uuid = ?", node).Scan(ctx, &stored); err != nil {
		t.Fatal(err)
	}
	if n[field] != value || deref(stored) != value {
		t.Errorf("PATCH %s = %q at %s answered 200 beside a conductor pinned to the old release, but the write was dropped: "+
			"the API reads back %v, the database row holds %q (GET / served %s)", field, value, newMax, n[field], deref(stored), served)
	}
}

// newFieldValue picks a node interface field of the new microversion and
// a value fake-hardware enables for it.
func newFieldValue(t *testing.T, drv map[string]any) (field, value string) {
	t.Helper()
	for _, f := range []string{"inspect_interface", "raid_interface", "vendor_interface", "console_interface"} {
		list, _ := drv["enabled_"+f+"s"].([]any)
		if len(list) > 0 {
			if v, ok := list[len(list)-1].(string); ok {
				return f, v
			}
		}
	}
	t.Fatalf("fake-hardware enables no inspect/raid/vendor/console implementation: %v", drv)
	return "", ""
}

// rawCall sends one request and returns its status and body whatever it is.
func rawCall(ctx context.Context, c *client, method, path string, body any) (int, []byte, error) {
	data, status, err := c.once(ctx, method, path, body)
	return status, data, err
}

// createNode enrolls a fake-hardware node and returns its UUID.
func createNode(t *testing.T, c *client, name string) string {
	t.Helper()
	var n apiNode
	if _, err := c.call(context.Background(), http.MethodPost, "/v1/nodes",
		map[string]any{"name": name, "driver": "fake-hardware"}, &n, http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	return n.UUID
}

// nodeVersions lists the object version of every node row.
func nodeVersions(t *testing.T, d *deployment) []string {
	t.Helper()
	var vs []*string
	if err := d.dbh.Bun().NewSelect().Table(db.TableNodes).Column("version").Order("uuid").Scan(context.Background(), &vs); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = deref(v)
	}
	return out
}

// pendingMigrations is the number of objects `rivet upgrade status` says
// the online data migrations still have to change.
func pendingMigrations(t *testing.T, d *deployment, b *build) int {
	t.Helper()
	st := statusOf(t, d, b)
	n := 0
	for _, m := range st.Migrations {
		n += m.Pending
	}
	return n
}

// finalizedSV is the finalized release's service version (0: none).
func finalizedSV(t *testing.T, d *deployment) int {
	t.Helper()
	st := statusOf(t, d, d.cur)
	if st.Finalized == nil {
		return 0
	}
	return st.Finalized.ServiceVersion
}

// statusOf runs `rivet upgrade status --json` with build b.
func statusOf(t *testing.T, d *deployment, b *build) upgradeStatus {
	t.Helper()
	r := &run{t: t, d: d, cur: b}
	return r.status()
}
