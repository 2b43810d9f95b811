package objects

import (
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// Widget is a test-only kind playing the seed's worked example: 1.14 has
// extra; 1.15 adds meta, which replaces extra (a hand converter); 1.16 adds
// color (additive), so round trips cross several versions.
type Widget struct {
	Base
	ID    int64          `rivet:"id"`
	Name  string         `rivet:"name"`
	Extra map[string]any `rivet:"extra"` // deprecated in 1.15: moved to Meta
	Meta  map[string]any `rivet:"meta"`  // 1.15
	Color *string        `rivet:"color"` // 1.16
}

func (*Widget) Kind() string { return "Widget" }

func widgetKind() Kind {
	return Kind{
		Name: "Widget",
		New:  func() Object { return new(Widget) },
		Versions: []Step{
			{Version: v("1.14")},
			{Version: v("1.15"), Up: widgetExtraToMeta, Down: widgetMetaToExtra},
			{Version: v("1.16")},
		},
		Fields: []Field{
			{Name: "id", Since: v("1.14")},
			{Name: "name", Since: v("1.14")},
			{Name: "extra", Since: v("1.14"), Default: map[string]any{}},
			{Name: "meta", Since: v("1.15"), Default: map[string]any{}},
			{Name: "color", Since: v("1.16"), Nullable: true},
		},
		Fingerprint: "1.16-546dfd596dfbe991bfbacb836664acaf",
	}
}

// widgetExtraToMeta moves extra to meta on the way up (seed: node.meta =
// db_obj['extra'], node.extra = None, both changed).
func widgetExtraToMeta(c *Conversion) error {
	w := c.Object.(*Widget)
	w.Meta = w.Extra
	c.Mark("meta")
	return c.Reset("extra")
}

// widgetMetaToExtra moves meta back to extra on the way down; the field
// table then resets (DB) or removes (wire) meta.
func widgetMetaToExtra(c *Conversion) error {
	w := c.Object.(*Widget)
	w.Extra = w.Meta
	c.Mark("extra")
	return nil
}

// Gadget is a test-only kind for the seed's "affected field": new appears
// in 1.5 and affected = new + 3 there, so going down to 1.4 must fix
// affected too.
type Gadget struct {
	Base
	ID       int64 `rivet:"id"`
	Affected int64 `rivet:"affected"`
	New      int64 `rivet:"new"` // 1.5
}

func (*Gadget) Kind() string { return "Gadget" }

func gadgetKind() Kind {
	return Kind{
		Name: "Gadget",
		New:  func() Object { return new(Gadget) },
		Versions: []Step{
			{Version: v("1.4")},
			{Version: v("1.5"), Down: func(c *Conversion) error {
				g := c.Object.(*Gadget)
				g.Affected -= g.New
				c.Mark("affected")
				return nil
			}},
		},
		Fields: []Field{
			{Name: "id", Since: v("1.4")},
			{Name: "affected", Since: v("1.4"), Default: int64(3)},
			{Name: "new", Since: v("1.5")},
		},
		Fingerprint: "1.5-ae0bb7046fd2a69f745d1c002be80644",
	}
}

// testKinds are registered next to the real ones in tests.
func testKinds() []Kind { return []Kind{widgetKind(), gadgetKind()} }

// testRegistry returns a registry with every real kind and the test kinds.
func testRegistry(t testing.TB) *Registry {
	t.Helper()
	r := NewRegistry()
	if err := Install(r); err != nil {
		t.Fatal(err)
	}
	for _, k := range testKinds() {
		if err := r.Register(k); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// testReleases is a release table in which release 0.1 ("anvil") writes
// Widget 1.14 and Gadget 1.4, and HEAD writes the latest.
func testReleases(t testing.TB) *release.Table {
	t.Helper()
	vs := func(s ...string) []version.Version {
		out := make([]version.Version, len(s))
		for i := range s {
			out[i] = v(s[i])
		}
		return out
	}
	tb, err := release.NewTable(
		release.Entry{Version: release.HeadKey, API: v("1.1"), RPC: v("1.0"), ServiceVersion: 2,
			Objects: map[string][]version.Version{"Widget": vs("1.16", "1.15"), "Gadget": vs("1.5"), "Node": vs("1.0")}},
		release.Entry{Version: "0.1", Name: "anvil", API: v("1.1"), RPC: v("1.0"), ServiceVersion: 1,
			Objects: map[string][]version.Version{"Widget": vs("1.14"), "Gadget": vs("1.4"), "Node": vs("1.0")}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func ptr[T any](v T) *T { return &v }

// objs builds Entry.Objects from kind, "v1,v2" pairs.
func objs(kv ...string) map[string][]version.Version {
	m := map[string][]version.Version{}
	for i := 0; i < len(kv); i += 2 {
		for _, s := range strings.Split(kv[i+1], ",") {
			m[kv[i]] = append(m[kv[i]], version.MustParse(s))
		}
	}
	return m
}
