package objects

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestChangeTracking(t *testing.T) {
	r := testRegistry(t)
	all := func(kind string) []string {
		fs, _ := r.FieldTable(kind)
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		slices.Sort(out)
		return out
	}
	tests := map[string]struct {
		build func(t *testing.T) Object
		want  []string
	}{
		"new object: everything": {
			build: func(t *testing.T) Object { obj, _ := r.New("Node"); return obj },
			want:  all("Node"),
		},
		"literal without snapshot: everything": {
			build: func(t *testing.T) Object { return &Chassis{} },
			want:  all("Chassis"),
		},
		"loaded: nothing": {
			build: func(t *testing.T) Object { return loadNode(t, r) },
		},
		"assigned scalar and pointer": {
			build: func(t *testing.T) Object {
				n := loadNode(t, r)
				n.Maintenance = true
				n.Name = ptr("n2")
				return n
			},
			want: []string{"maintenance", "name"},
		},
		"assigned the same value": {
			build: func(t *testing.T) Object {
				n := loadNode(t, r)
				n.Name = ptr("n1")
				return n
			},
		},
		"mutated a map in place": {
			build: func(t *testing.T) Object {
				n := loadNode(t, r)
				n.DriverInfo["redfish_address"] = "https://10.0.0.8"
				return n
			},
			want: []string{"driver_info"},
		},
		"marked": {
			build: func(t *testing.T) Object {
				n := loadNode(t, r)
				if err := r.MarkChanged(n, "power_state"); err != nil {
					t.Fatal(err)
				}
				return n
			},
			want: []string{"power_state"},
		},
		"reset after a save": {
			build: func(t *testing.T) Object {
				n := loadNode(t, r)
				n.Driver = "ipmi"
				n.Changes().Mark("extra")
				if err := r.ResetChanges(n); err != nil {
					t.Fatal(err)
				}
				return n
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mustChanged(t, r, tc.build(t))); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
		})
	}
}

// loadNode fills a Node as the DB layer would, through the generic
// accessors, then finishes the load with FromDB.
func loadNode(t *testing.T, r *Registry) *Node {
	t.Helper()
	row := map[string]any{
		"id": int64(1), "uuid": "u1", "name": "n1", "driver": "redfish",
		"driver_info": map[string]any{"redfish_address": "https://10.0.0.7"},
		"created_at":  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	obj, _ := r.New("Node")
	for name, val := range row {
		if err := r.Set(obj, name, val); err != nil {
			t.Fatal(err)
		}
	}
	latest, _ := r.Latest("Node")
	if err := r.FromDB(obj, latest); err != nil {
		t.Fatal(err)
	}
	return obj.(*Node)
}

func TestAccessors(t *testing.T) {
	r := testRegistry(t)
	n := loadNode(t, r)
	if got, err := r.Get(n, "name"); err != nil || *got.(*string) != "n1" {
		t.Errorf("Get(name) = %v, %v", got, err)
	}
	if err := r.Set(n, "name", nil); err != nil || n.Name != nil {
		t.Errorf("Set(name, nil): %v, name = %v", err, n.Name)
	}
	if err := r.Set(n, "extra", map[string]any(nil)); err != nil || n.Extra == nil {
		t.Errorf("Set(extra, nil map): %v, extra = %#v; want {}", err, n.Extra)
	}
	p, err := r.Pointer(n, "driver")
	if err != nil {
		t.Fatal(err)
	}
	*p.(*string) = "ipmi"
	if n.Driver != "ipmi" {
		t.Errorf("Pointer did not point at the field")
	}
	vals, err := r.Values(n)
	if err != nil || len(vals) != len(r.FieldsAt("Node", v("1.2"))) || vals["driver"] != "ipmi" {
		t.Errorf("Values = %v, %v", vals, err)
	}

	var unknown *UnknownFieldError
	for name, err := range map[string]error{
		"Set unknown":  r.Set(n, "bogus", 1),
		"Get unknown":  second(r.Get(n, "bogus")),
		"Mark unknown": r.MarkChanged(n, "bogus"),
	} {
		if !errors.As(err, &unknown) {
			t.Errorf("%s: error = %v, want *UnknownFieldError", name, err)
		}
	}
	for name, err := range map[string]error{
		"int for int64":      r.Set(n, "id", 3),
		"nil for non-null":   r.Set(n, "driver", nil),
		"string for map":     r.Set(n, "extra", "x"),
		"int64 for *string":  r.Set(n, "name", int64(1)),
		"[]any for []string": r.Set(&Conductor{}, "drivers", []any{"x"}),
	} {
		if !errors.Is(err, ErrFieldType) {
			t.Errorf("%s: error = %v, want ErrFieldType", name, err)
		}
	}
	if _, err := r.Get(&struct{ Widget }{}, "id"); err == nil {
		t.Error("Get on a type that is not the registered one succeeded")
	}
}

func TestFieldsAt(t *testing.T) {
	r := testRegistry(t)
	tests := map[string]struct {
		at   string
		want []string
	}{
		"1.14": {"1.14", []string{"id", "name", "extra"}},
		"1.15": {"1.15", []string{"id", "name", "extra", "meta"}},
		"1.16": {"1.16", []string{"id", "name", "extra", "meta", "color"}},
		"2.0":  {"2.0", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, r.FieldsAt("Widget", v(tc.at))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if r.Available("Widget", "meta", v("1.14")) || !r.Available("Widget", "meta", v("1.15")) || r.Available("Sprocket", "id", v("1.0")) {
		t.Error("Available disagrees with the field table")
	}
}

func TestCopyIsDeep(t *testing.T) {
	r := testRegistry(t)
	orig := loadNode(t, r)
	cp, err := r.Copy(orig)
	if err != nil {
		t.Fatal(err)
	}
	c := cp.(*Node)
	c.DriverInfo["redfish_address"] = "changed"
	*c.Name = "changed"
	if orig.DriverInfo["redfish_address"] != "https://10.0.0.7" || *orig.Name != "n1" {
		t.Error("Copy shares state with its source")
	}
	if diff := cmp.Diff([]string{"driver_info", "name"}, mustChanged(t, r, cp)); diff != "" {
		t.Errorf("copy's changes (-want +got):\n%s", diff)
	}
}

func second[T any](_ T, err error) error { return err }
