package dbtest

import (
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// BumpedRegistry registers the real object kinds with Node bumped to 1.1
// by a remote-method change alone, so tests can cross a version step with
// the real nodes table.
func BumpedRegistry(t testing.TB) *objects.Registry {
	t.Helper()
	r := objects.NewRegistry()
	for _, k := range objects.Builtin() {
		if k.Name == "Node" {
			k.Versions = append(k.Versions, objects.Step{Version: version.MustParse("1.1"), MethodsOnly: true})
			k.Methods = append(k.Methods, "test_only_method()")
			fp, err := objects.ComputeFingerprint(k)
			if err != nil {
				t.Fatal(err)
			}
			k.Fingerprint = fp
		}
		if err := r.Register(k); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// BumpedTable is the release table matching BumpedRegistry: release 0.1
// "anvil" (service version 1) writes Node 1.0; HEAD (service version 2)
// writes 1.1.
func BumpedTable(t testing.TB) *release.Table {
	t.Helper()
	v := version.MustParse
	objs := func(node ...string) map[string][]version.Version {
		m := map[string][]version.Version{}
		for _, k := range []string{"Chassis", "Conductor", "Port", "Portgroup"} {
			m[k] = []version.Version{v("1.0")}
		}
		for _, n := range node {
			m["Node"] = append(m["Node"], v(n))
		}
		return m
	}
	tb, err := release.NewTable(
		release.Entry{Version: release.HeadKey, API: v("1.26"), RPC: v("1.0"), Objects: objs("1.1", "1.0"), ServiceVersion: 2},
		release.Entry{Version: "0.1", Name: "anvil", API: v("1.26"), RPC: v("1.0"), Objects: objs("1.0"), ServiceVersion: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}
