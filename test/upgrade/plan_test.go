package upgrade

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// plan is what the proof runs for a release table: it is derived from the
// table alone (no builds), so that cutting a release (a new entry with its
// Commit) widens the proof without touching it.
type plan struct {
	// newest is the newest cut release: the runs upgrade it to HEAD.
	newest string
	// chain is every cut release, oldest first, then HEAD: the chain run
	// upgrades through each in turn. Two entries (one cut release) make it
	// the same upgrade as newest → HEAD, which the other runs cover.
	chain []string
	// skipFrom is a cut release HEAD must refuse to run beside (two or more
	// service-version steps behind it: release.Table.StepsBehind); empty,
	// with skipWhy saying why, when the table has none.
	skipFrom, skipWhy string
	// gapFrom → gapTo is the newest upgrade of the chain that raises the
	// service version (online migrations, RPC changes): the gap tests run
	// on it. Empty, with gapWhy, when no step of the chain raises it.
	gapFrom, gapTo, gapWhy string
}

// planFor derives the plan from tbl. A cut release without a Commit cannot
// be built, so a table with one is an error (the cut's follow-up commit
// records it).
func planFor(tbl *release.Table) (plan, error) {
	rels := tbl.Releases()
	if len(rels) == 0 {
		return plan{}, fmt.Errorf("the release table has no cut release to upgrade from")
	}
	var p plan
	for _, e := range rels {
		if e.Commit == "" {
			return plan{}, fmt.Errorf("release %s records no Commit in core/release/releases.go: the proof cannot build it", e.Label())
		}
		p.chain = append(p.chain, e.Version)
	}
	p.chain = append(p.chain, release.HeadKey)
	p.newest = rels[len(rels)-1].Version

	// Skipping: the newest release HEAD must refuse.
	for i := len(rels) - 1; i >= 0 && p.skipFrom == ""; i-- {
		if steps, _, ok := tbl.StepsBehind(rels[i].ServiceVersion); !ok || steps >= 2 {
			p.skipFrom = rels[i].Version
		}
	}
	switch {
	case p.skipFrom != "":
	case len(rels) < 2:
		p.skipWhy = fmt.Sprintf("needs two cut releases to skip one; the table has only %s", rels[0].Label())
	default:
		p.skipWhy = fmt.Sprintf("every cut release is at most one service-version step behind HEAD (service version %d): "+
			"releases sharing a service version mix freely, so there is no skip to refuse", tbl.Head().ServiceVersion)
	}

	all := tbl.All()
	for i := len(all) - 1; i > 0 && p.gapFrom == ""; i-- {
		if all[i].ServiceVersion > all[i-1].ServiceVersion {
			p.gapFrom, p.gapTo = all[i-1].Version, all[i].Version
		}
	}
	if p.gapFrom == "" {
		p.gapWhy = "no upgrade of the chain raises the service version: nothing is pinned, migrated or finalized"
	}
	return p, nil
}

// defaultPlan is the plan of Rivet's own release table.
func defaultPlan(t *testing.T) plan {
	t.Helper()
	p, err := planFor(release.Default())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The plan of synthetic tables: today's (one cut release), right after
// cutting a release that shares HEAD's service version, and tables where
// skipping a release must be refused.
func TestPlanFor(t *testing.T) {
	objs := map[string][]version.Version{"Node": {version.MustParse("1.0")}}
	entry := func(key string, sv int) release.Entry {
		e := release.Entry{Version: key, Name: "n" + strings.ReplaceAll(key, ".", ""), API: version.MustParse(fmt.Sprintf("1.%d", 20+sv)),
			RPC: version.MustParse("1.0"), Objects: objs, ServiceVersion: sv, Commit: fmt.Sprintf("%040d", sv)}
		if key == release.HeadKey {
			e.Name, e.Commit = "", ""
		}
		return e
	}
	cases := []struct {
		name     string
		head     int
		rels     []release.Entry
		want     plan
		wantFail string
	}{
		{name: "one cut release (today)", head: 2, rels: []release.Entry{entry("0.1", 1)},
			want: plan{newest: "0.1", chain: []string{"0.1", "HEAD"}, skipWhy: "needs two cut releases",
				gapFrom: "0.1", gapTo: "HEAD"}},
		{name: "0.2 cut, HEAD 0.3.dev speaks as 0.2", head: 2, rels: []release.Entry{entry("0.1", 1), entry("0.2", 2)},
			want: plan{newest: "0.2", chain: []string{"0.1", "0.2", "HEAD"}, skipWhy: "at most one service-version step",
				gapFrom: "0.1", gapTo: "0.2"}},
		{name: "0.2 cut, HEAD already ahead", head: 3, rels: []release.Entry{entry("0.1", 1), entry("0.2", 2)},
			want: plan{newest: "0.2", chain: []string{"0.1", "0.2", "HEAD"}, skipFrom: "0.1",
				gapFrom: "0.2", gapTo: "HEAD"}},
		{name: "three cut releases", head: 4, rels: []release.Entry{entry("0.1", 1), entry("0.2", 2), entry("0.3", 3)},
			want: plan{newest: "0.3", chain: []string{"0.1", "0.2", "0.3", "HEAD"}, skipFrom: "0.2",
				gapFrom: "0.3", gapTo: "HEAD"}},
		{name: "nothing raises the service version", head: 1, rels: []release.Entry{entry("0.1", 1)},
			want: plan{newest: "0.1", chain: []string{"0.1", "HEAD"}, skipWhy: "needs two cut releases", gapWhy: "no upgrade"}},
		{name: "a release without its commit", head: 3, rels: []release.Entry{entry("0.1", 1), func() release.Entry {
			e := entry("0.2", 2)
			e.Commit = ""
			return e
		}()}, wantFail: "0.2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl, err := release.NewTable(entry(release.HeadKey, c.head), c.rels...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := planFor(tbl)
			if c.wantFail != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantFail) {
					t.Fatalf("planFor = %+v, %v; want an error naming %s", got, err, c.wantFail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.newest != c.want.newest || strings.Join(got.chain, " ") != strings.Join(c.want.chain, " ") ||
				got.skipFrom != c.want.skipFrom || got.gapFrom != c.want.gapFrom || got.gapTo != c.want.gapTo {
				t.Errorf("planFor = %+v\nwant     %+v", got, c.want)
			}
			if (got.skipFrom == "") != (got.skipWhy != "") || !strings.Contains(got.skipWhy, c.want.skipWhy) {
				t.Errorf("skip reason %q, want one containing %q (and only without a skip)", got.skipWhy, c.want.skipWhy)
			}
			if (got.gapFrom == "") != (got.gapWhy != "") || !strings.Contains(got.gapWhy, c.want.gapWhy) {
				t.Errorf("gap reason %q, want one containing %q", got.gapWhy, c.want.gapWhy)
			}
		})
	}
	// Rivet's own table must give a plan.
	defaultPlan(t)
}
