package objects

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/version"
)

// roundTrips are the ways an object leaves at an older version and comes
// back to the latest: through the DB (flag false both ways) and through the
// wire (flag true out; false into a server, true into a client).
var roundTrips = map[string]func(t *testing.T, r *Registry, obj Object, at version.Version) Object{
	"db": func(t *testing.T, r *Registry, obj Object, at version.Version) Object {
		out, _, err := r.ForDB(obj, at)
		if err != nil {
			t.Fatal(err)
		}
		// The row holds only the columns version at knows; the rest read
		// back as zero values, as FromDB's contract says.
		row := r.kinds[obj.Kind()].New()
		for _, name := range r.FieldsAt(obj.Kind(), at) {
			val, _ := r.Get(out, name)
			if err := r.Set(row, name, val); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.FromDB(row, at); err != nil {
			t.Fatal(err)
		}
		return row
	},
	"wire to server": func(t *testing.T, r *Registry, obj Object, at version.Version) Object {
		return overWire(t, r, obj, at, true)
	},
	"wire to client": func(t *testing.T, r *Registry, obj Object, at version.Version) Object {
		return overWire(t, r, obj, at, false)
	},
}

func overWire(t *testing.T, r *Registry, obj Object, at version.Version, server bool) Object {
	t.Helper()
	b, err := r.Encode(obj, at)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Decode(b, server)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return got
}

// roundTripWant returns what kind's sample looks like after a round trip
// through version at. By default the fields at lacks come back as their
// defaults; kinds with hand converters say what those carry.
func roundTripWant(r *Registry, kind string, at version.Version) Object {
	obj := samples()[kind]()
	kd := r.kinds[kind]
	for _, fi := range kd.fields {
		if !fi.availableAt(at) {
			fi.reset(obj)
		}
	}
	switch w := obj.(type) {
	case *Widget:
		// The 1.15 converter carries meta through extra.
		w.Meta = samples()[kind]().(*Widget).Meta
	case *Gadget:
		// Below 1.5, affected loses new's share and new is gone.
		if at.Less(v("1.5")) {
			w.Affected = 3
		}
	}
	return obj
}

func TestRoundTrip(t *testing.T) {
	r := testRegistry(t)
	for _, kind := range r.Kinds() {
		versions, _ := r.Versions(kind)
		latest, _ := r.Latest(kind)
		for _, at := range versions {
			for how, trip := range roundTrips {
				t.Run(kind+"/"+at.String()+"/"+how, func(t *testing.T) {
					got := trip(t, r, loadedSample(r, kind), at)
					want := roundTripWant(r, kind, at)
					if diff := cmp.Diff(values(t, r, want), values(t, r, got)); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
					changed := mustChanged(t, r, got)
					switch {
					case at == latest && how == "db":
						// The row was written and read at the latest: nothing to do.
						if len(changed) != 0 {
							t.Errorf("changed = %v, want none", changed)
						}
					case at == latest:
						// Nothing converted: the sender's change travels.
						if !cmp.Equal(changed, []string{sampleChanged[kind]}) {
							t.Errorf("changed = %v, want [%s]", changed, sampleChanged[kind])
						}
					case how == "wire to client":
						if len(changed) != 0 {
							t.Errorf("client kept changes %v", changed)
						}
					default:
						// Every field the older version lacks must be written
						// by the next save.
						for _, f := range r.kinds[kind].fields {
							if !f.availableAt(at) && !slices.Contains(changed, f.Name) {
								t.Errorf("field %s (since %s) not marked changed after a trip through %s: %v", f.Name, f.Since, at, changed)
							}
						}
					}
				})
			}
		}
	}
}

// The seed's scenario 3.1: an unpinned service saves at the latest, then a
// pinned one saves the same object at an older version, which must clear
// the newer fields, even when its in-memory value is already the default
// (the row may hold what another, unpinned service wrote meanwhile).
func TestSaveNewerThenOlder(t *testing.T) {
	r := testRegistry(t)
	for name, color := range map[string]*string{"color set": ptr("red"), "color already default": nil} {
		t.Run(name, func(t *testing.T) {
			obj := loadedWidget(t, r)
			obj.(*Widget).Color = color
			if err := r.ResetChanges(obj); err != nil {
				t.Fatal(err)
			}
			out, changed, err := r.ForDB(obj, v("1.15"))
			if err != nil {
				t.Fatal(err)
			}
			if out.(*Widget).Color != nil || !slices.Contains(changed, "color") {
				t.Errorf("1.15 write: color = %v, changed = %v; want nil and written", out.(*Widget).Color, changed)
			}
		})
	}
}

// Serializing at the latest sends exactly the latest fields.
func TestSerializeLatestIsIdentity(t *testing.T) {
	r := testRegistry(t)
	for _, kind := range r.Kinds() {
		t.Run(kind, func(t *testing.T) {
			latest, _ := r.Latest(kind)
			p, err := r.Serialize(loadedSample(r, kind), latest)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range p.Data {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			want := r.FieldsAt(kind, latest)
			slices.Sort(want)
			if diff := cmp.Diff(want, keys); diff != "" {
				t.Errorf("data keys (-want +got):\n%s", diff)
			}
			if _, err := json.Marshal(p); err != nil {
				t.Fatal(err)
			}
		})
	}
}
