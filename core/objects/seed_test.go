package objects

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
)

// The tests below are the seed's worked example (seeds/000_…, "Handling
// IronicObject versions") with Widget standing in for Node: FromVer writes
// Widget 1.14 (extra), ToVer has 1.15 (meta replaces extra) and 1.16.

func pinnedTo(t *testing.T, key string) release.Entry {
	t.Helper()
	e, ok := testReleases(t).Lookup(key)
	if !ok {
		t.Fatalf("no release %s", key)
	}
	return e
}

func mustChanged(t *testing.T, r *Registry, obj Object) []string {
	t.Helper()
	ch, err := r.Changed(obj)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// "Getting objects from the database": a 1.14 row read by ToVer.
func TestSeedReadOldRow(t *testing.T) {
	r := testRegistry(t)
	row := &Widget{ID: 1, Name: "w1", Extra: map[string]any{"owner": "ops"}} // meta, color: zero, as 1.14 lacks them
	if err := r.FromDB(row, v("1.14")); err != nil {
		t.Fatal(err)
	}
	want := &Widget{ID: 1, Name: "w1", Extra: map[string]any{}, Meta: map[string]any{"owner": "ops"}}
	if diff := cmp.Diff(values(t, r, want), values(t, r, row)); diff != "" {
		t.Errorf("node after FromDB (-want +got):\n%s", diff)
	}
	// meta and extra as in the seed; color because 1.16 added it and the
	// write must set it.
	if diff := cmp.Diff([]string{"color", "extra", "meta"}, mustChanged(t, r, row)); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}

	// The same row read at the latest version converts nothing.
	row = &Widget{ID: 1, Name: "w1", Extra: map[string]any{}, Meta: map[string]any{"owner": "ops"}}
	if err := r.FromDB(row, v("1.16")); err != nil {
		t.Fatal(err)
	}
	if ch := mustChanged(t, r, row); len(ch) != 0 {
		t.Errorf("latest row changed %v", ch)
	}
}

// "Saving objects to the database" while pinned to FromVer.
func TestSeedSavePinned(t *testing.T) {
	r := testRegistry(t)
	obj := loadedWidget(t, r)
	before := values(t, r, obj)

	target, err := r.Target("Widget", pinnedTo(t, "anvil"))
	if err != nil || target != v("1.14") {
		t.Fatalf("Target = %v, %v; want 1.14", target, err)
	}
	out, changed, err := r.ForDB(obj, target)
	if err != nil {
		t.Fatal(err)
	}
	want := &Widget{ID: 1, Name: "w1", Extra: map[string]any{"owner": "ops"}, Meta: map[string]any{}}
	if diff := cmp.Diff(values(t, r, want), values(t, r, out)); diff != "" {
		t.Errorf("row written (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"color", "extra", "meta"}, changed); diff != "" {
		t.Errorf("columns written (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, values(t, r, obj)); diff != "" {
		t.Errorf("ForDB modified its input (-before +after):\n%s", diff)
	}
	if ch := mustChanged(t, r, obj); len(ch) != 0 {
		t.Errorf("ForDB marked its input changed: %v", ch)
	}

	// Unpinned, the latest version is written with only what changed.
	target, err = r.Target("Widget", pinnedTo(t, release.HeadKey))
	if err != nil || target != v("1.16") {
		t.Fatalf("unpinned Target = %v, %v", target, err)
	}
	obj.(*Widget).Name = "w2"
	if _, changed, err = r.ForDB(obj, target); err != nil || !cmp.Equal(changed, []string{"name"}) {
		t.Errorf("unpinned ForDB changed = %v, %v; want [name]", changed, err)
	}
}

// "Sending objects via RPC" while pinned: 1.14 goes out without meta and
// with the conversion's change to extra.
func TestSeedSendPinned(t *testing.T) {
	r := testRegistry(t)
	obj := loadedWidget(t, r)
	p, err := r.Serialize(obj, v("1.14"))
	if err != nil {
		t.Fatal(err)
	}
	want := Primitive{
		Name: "Widget", Version: v("1.14"),
		Data:    map[string]json.RawMessage{"id": raw(`1`), "name": raw(`"w1"`), "extra": raw(`{"owner":"ops"}`)},
		Changes: []string{"extra"},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("primitive (-want +got):\n%s", diff)
	}
}

// "Receiving objects via RPC": FromVer's API sends an update of extra at
// 1.14; ToVer's conductor (server) sees a change of meta, ToVer's API
// (client) sees no changes.
func TestSeedReceiveOldUpdate(t *testing.T) {
	r := testRegistry(t)
	b := []byte(`{"rivet_object.name":"Widget","rivet_object.version":"1.14",
		"rivet_object.data":{"id":1,"name":"w1","extra":{"owner":"dev"}},
		"rivet_object.changes":["extra"]}`)
	tests := map[string]struct {
		server      bool
		wantChanged []string
	}{
		"server keeps changes": {server: true, wantChanged: []string{"color", "extra", "meta"}},
		"client drops changes": {server: false, wantChanged: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj, err := r.Decode(b, tc.server)
			if err != nil {
				t.Fatal(err)
			}
			want := &Widget{ID: 1, Name: "w1", Extra: map[string]any{}, Meta: map[string]any{"owner": "dev"}}
			if diff := cmp.Diff(values(t, r, want), values(t, r, obj)); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantChanged, mustChanged(t, r, obj)); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

// The seed's "affected" case: new appears in 1.5 and affected = new+3;
// going down to 1.4 must fix affected, on both boundaries.
func TestSeedAffectedField(t *testing.T) {
	r := testRegistry(t)
	g := &Gadget{ID: 1, New: 10, Affected: 13}
	if err := r.FromDB(g, v("1.5")); err != nil {
		t.Fatal(err)
	}
	out, changed, err := r.ForDB(g, v("1.4"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(values(t, r, &Gadget{ID: 1, Affected: 3}), values(t, r, out)); diff != "" {
		t.Errorf("1.4 row (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"affected", "new"}, changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
	p, err := r.Serialize(g, v("1.4"))
	if err != nil {
		t.Fatal(err)
	}
	wantData := map[string]json.RawMessage{"id": raw(`1`), "affected": raw(`3`)}
	if diff := cmp.Diff(wantData, p.Data); diff != "" {
		t.Errorf("1.4 data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"affected"}, p.Changes); diff != "" {
		t.Errorf("1.4 changes (-want +got):\n%s", diff)
	}
}

func TestTarget(t *testing.T) {
	r := testRegistry(t)
	tests := map[string]struct {
		kind    string
		entry   release.Entry
		want    string
		wantErr bool
	}{
		"pinned":              {kind: "Widget", entry: pinnedTo(t, "0.1"), want: "1.14"},
		"head":                {kind: "Widget", entry: pinnedTo(t, release.HeadKey), want: "1.16"},
		"kind not in release": {kind: "Port", entry: pinnedTo(t, "0.1"), want: "1.1"}, // Port's latest
		"newer than code":     {kind: "Widget", entry: release.Entry{Version: "9.0", Objects: objs("Widget", "1.17")}, wantErr: true},
		"other major":         {kind: "Widget", entry: release.Entry{Version: "9.0", Objects: objs("Widget", "2.0")}, wantErr: true},
		"dropped old version": {kind: "Widget", entry: release.Entry{Version: "9.0", Objects: objs("Widget", "1.13")}, wantErr: true},
		"unknown kind":        {kind: "Sprocket", entry: pinnedTo(t, "0.1"), wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := r.Target(tc.kind, tc.entry)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Target = %v, want error", got)
				}
				return
			}
			if err != nil || got != v(tc.want) {
				t.Fatalf("Target = %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// loadedWidget is a Widget as read from a 1.16 row: meta set, nothing changed.
func loadedWidget(t *testing.T, r *Registry) Object {
	t.Helper()
	obj := &Widget{ID: 1, Name: "w1", Extra: map[string]any{}, Meta: map[string]any{"owner": "ops"}, Color: ptr("red")}
	if err := r.FromDB(obj, v("1.16")); err != nil {
		t.Fatal(err)
	}
	return obj
}

func values(t testing.TB, r *Registry, obj Object) map[string]any {
	t.Helper()
	vals, err := r.Values(obj)
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
