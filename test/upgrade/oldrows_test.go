package upgrade

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
)

// oldRows is how many nodes the old release writes before the upgrade.
const oldRows = 2000

// TestNewColumnsOnOldRows (issue 30): thousands of nodes written by the
// newest cut release, then the schema upgrade, the new release's services
// (unpinned: the whole fleet is new) and the online data migrations. The
// new release adds Node fields (those of its Node version above the old
// release's, from the object registry) as nullable columns or columns
// with a default, and no online migration of its own: every old row must
// read back through the API with each new field exactly as a node the new
// release creates from the same request (its default), and none may be
// left with a migration pending.
func TestNewColumnsOnOldRows(t *testing.T) {
	requireUpgrade(t)
	old, cur := builds(t)
	d := newMini(t, old, cur)
	ctx := context.Background()
	oc := d.add("conductor", old, "")
	oa := d.add("api", old, "")
	c := newClient(oa.url(), old.info.APIMax, &recorder{})
	errs := parallel(8, oldRows, func(i int) error {
		_, err := c.call(ctx, http.MethodPost, "/v1/nodes", map[string]any{"name": fmt.Sprintf("old-%d", i), "driver": "fake-hardware",
			"properties": map[string]any{"cpu_arch": "x86_64"}, "extra": map[string]any{"i": i}}, nil, http.StatusCreated)
		return err
	})
	for i, err := range errs {
		if i == 5 {
			break
		}
		t.Error(err)
	}
	if len(errs) > 0 {
		t.Fatalf("%d of %d nodes not created by %s", len(errs), oldRows, old.info.Release)
	}

	// The step table: the schema, each service replaced by the new
	// release pinned to the old one, then unpinned (SIGHUP): finalized.
	pin := pinFor(old)
	d.rivet(cur, "dbsync", "upgrade").ok(t)
	oc.restartAs(cur, pin)
	oa.restartAs(cur, pin)
	oc.repin("")
	oa.repin("")
	api := oa
	for i := 0; ; i++ {
		res := d.rivet(cur, "dbsync", "online-data-migrations")
		if res.code == 0 {
			break
		}
		if res.code != 1 || i == 10 {
			t.Fatalf("online-data-migrations: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	}
	if n := pendingMigrations(t, d, cur); n != 0 {
		t.Errorf("%d objects still pending online migrations", n)
	}

	nc := newClient(api.url(), cur.info.APIMax, &recorder{})
	var fresh map[string]any
	if _, err := nc.call(ctx, http.MethodPost, "/v1/nodes", map[string]any{"name": "fresh", "driver": "fake-hardware",
		"properties": map[string]any{"cpu_arch": "x86_64"}}, &fresh, http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.call(ctx, http.MethodGet, "/v1/nodes/fresh", nil, &fresh, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	fields := newNodeFields(t, old.info.Objects["Node"])
	var shown, hidden []string
	for _, f := range fields {
		if _, ok := fresh[f]; ok {
			shown = append(shown, f)
		} else {
			hidden = append(hidden, f)
		}
	}
	if len(shown) == 0 {
		t.Fatalf("none of the new Node fields %v is shown at API %s", fields, cur.info.APIMax)
	}
	seen, wrong := 0, 0
	path := "/v1/nodes/detail?limit=500"
	for path != "" {
		var page struct {
			Nodes []map[string]any `json:"nodes"`
			Next  string           `json:"next"`
		}
		if _, err := nc.call(ctx, http.MethodGet, path, nil, &page, http.StatusOK); err != nil {
			t.Fatal(err)
		}
		for _, n := range page.Nodes {
			if n["name"] == "fresh" {
				continue
			}
			seen++
			for _, f := range shown {
				if got, ok := n[f]; ok && got == nil && strings.HasSuffix(f, "_interface") {
					// Unset: the hardware type's default, resolved when the
					// conductor uses the node (as Ironic's
					// build_driver_for_task); checked through validate below.
					continue
				}
				if got, ok := n[f]; !ok || !reflect.DeepEqual(got, fresh[f]) {
					if wrong++; wrong <= 10 {
						t.Errorf("node %v (written by %s): %s = %#v (present %v), want %#v as on a node %s creates",
							n["name"], old.info.Release, f, got, ok, fresh[f], cur.info.Release)
					}
				}
			}
		}
		path = ""
		if page.Next != "" {
			if u, err := url.Parse(page.Next); err == nil {
				path = u.RequestURI()
			}
		}
	}
	// The conductor resolves an old node's unset interfaces to the same
	// defaults a new node gets: validate answers for each of them as for
	// the new node.
	var oldVal, freshVal map[string]any
	if _, err := nc.call(ctx, http.MethodGet, "/v1/nodes/old-1/validate", nil, &oldVal, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.call(ctx, http.MethodGet, "/v1/nodes/fresh/validate", nil, &freshVal, http.StatusOK); err != nil {
		t.Fatal(err)
	}
	for _, f := range shown {
		iface, ok := strings.CutSuffix(f, "_interface")
		if !ok {
			continue
		}
		if !reflect.DeepEqual(oldVal[iface], freshVal[iface]) {
			t.Errorf("validate %s: old node %#v, new node %#v: the unset interface does not resolve to the default", iface, oldVal[iface], freshVal[iface])
		}
	}
	if seen != oldRows {
		t.Errorf("the API lists %d of the %d old nodes", seen, oldRows)
	}
	if wrong > 10 {
		t.Errorf("… %d wrong values in all", wrong)
	}
	t.Logf("%d nodes written by %s read back at API %s with the defaults of %d new fields %v (not shown at %s: %v); row versions %v",
		seen, old.info.Release, cur.info.APIMax, len(shown), shown, cur.info.APIMax, hidden, versionCounts(nodeVersions(t, d)))
	d.stopAllMini()
}

// newNodeFields are the Node fields newer than the old release's Node
// version, by their API names.
func newNodeFields(t *testing.T, oldNode string) []string {
	t.Helper()
	ov := version.MustParse(oldNode)
	var out []string
	for _, f := range objects.NodeKind().Fields {
		if f.Since.Compare(ov) <= 0 {
			continue
		}
		name := f.Name
		if name == "allocation_id" {
			name = "allocation_uuid" // the API shows the allocation's UUID
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		t.Skipf("Node %s adds no field over %s", objects.NodeKind().Versions[len(objects.NodeKind().Versions)-1].Version, oldNode)
	}
	return out
}

func versionCounts(vs []string) map[string]int {
	out := map[string]int{}
	for _, v := range vs {
		out[v]++
	}
	return out
}
