package objects

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeErrors(t *testing.T) {
	r := testRegistry(t)
	prim := func(name, ver, data string, changes ...string) string {
		ch := ""
		if changes != nil {
			b, _ := json.Marshal(changes)
			ch = `,"rivet_object.changes":` + string(b)
		}
		return `{"rivet_object.name":"` + name + `","rivet_object.version":"` + ver + `","rivet_object.data":` + data + ch + `}`
	}
	var (
		unknownKind  *UnknownKindError
		incompatible *IncompatibleVersionError
		unknownField *UnknownFieldError
		malformed    *MalformedError
	)
	tests := map[string]struct {
		in     string
		target any
		want   string
	}{
		"unknown kind":           {prim("Sprocket", "1.0", `{}`), &unknownKind, `unknown object kind "Sprocket"`},
		"other major":            {prim("Widget", "2.0", `{}`), &incompatible, "Widget version 2.0 is not compatible"},
		"too new":                {prim("Widget", "1.17", `{}`), &incompatible, "Widget version 1.17"},
		"older than known":       {prim("Widget", "1.13", `{}`), &incompatible, "handles 1.14 to 1.16"},
		"not JSON":               {`{"rivet_object.name":`, &malformed, "malformed primitive"},
		"not an object":          {`[1,2]`, &malformed, "malformed primitive"},
		"trailing garbage":       {prim("Widget", "1.16", `{}`) + "x", &malformed, "malformed primitive"},
		"no name":                {`{"rivet_object.version":"1.0","rivet_object.data":{}}`, &malformed, "no rivet_object.name"},
		"no version":             {`{"rivet_object.name":"Node","rivet_object.data":{}}`, &malformed, "no rivet_object.version"},
		"bad version":            {prim("Node", "1.x", `{}`), &malformed, "invalid version"},
		"no data":                {`{"rivet_object.name":"Node","rivet_object.version":"1.0"}`, &malformed, "no rivet_object.data"},
		"data not an object":     {prim("Node", "1.0", `[]`), &malformed, "malformed primitive"},
		"unknown data key":       {prim("Node", "1.0", `{"bogus":1}`), &unknownField, `Node 1.0 has no field "bogus"`},
		"key newer than version": {prim("Widget", "1.14", `{"meta":{}}`), &unknownField, `Widget 1.14 has no field "meta"`},
		"unknown change":         {prim("Widget", "1.16", `{}`, "bogus"), &unknownField, `has no field "bogus"`},
		"change newer than ver":  {prim("Widget", "1.15", `{}`, "color"), &unknownField, `Widget 1.15 has no field "color"`},
		"wrong value type":       {prim("Node", "1.0", `{"id":"seven"}`), &malformed, "field id"},
		"fraction for int":       {prim("Node", "1.0", `{"id":7.5}`), &malformed, "field id"},
		"null not nullable":      {prim("Node", "1.0", `{"driver":null}`), &malformed, "null for a field that is not nullable"},
		"null map":               {prim("Node", "1.0", `{"extra":null}`), &malformed, "field extra"},
		"bad timestamp":          {prim("Node", "1.0", `{"created_at":"yesterday"}`), &malformed, "field created_at"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, server := range []bool{true, false} {
				obj, err := r.Decode([]byte(tc.in), server)
				if err == nil {
					t.Fatalf("Decode = %v, want error", obj)
				}
				if !errors.As(err, tc.target) {
					t.Errorf("error %T (%v) is not a %T", err, err, tc.target)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q does not mention %q", err, tc.want)
				}
			}
		})
	}
}

func TestSerializeErrors(t *testing.T) {
	r := testRegistry(t)
	var incompatible *IncompatibleVersionError
	for _, target := range []string{"1.17", "2.0", "0.16", "1.13"} {
		if _, err := r.Serialize(loadedWidget(t, r), v(target)); !errors.As(err, &incompatible) {
			t.Errorf("Serialize at %s: error = %v, want *IncompatibleVersionError", target, err)
		}
		if _, _, err := r.ForDB(loadedWidget(t, r), v(target)); !errors.As(err, &incompatible) {
			t.Errorf("ForDB at %s: error = %v, want *IncompatibleVersionError", target, err)
		}
		if err := r.FromDB(&Widget{}, v(target)); !errors.As(err, &incompatible) {
			t.Errorf("FromDB at %s: error = %v, want *IncompatibleVersionError", target, err)
		}
	}
	if _, err := r.Serialize(&Node{}, v("1.0")); err != nil {
		t.Errorf("zero Node: %v", err)
	}
}

// Timestamps travel as RFC 3339 in UTC whatever the sender's zone, and
// come back as UTC.
func TestWireTimestamps(t *testing.T) {
	r := testRegistry(t)
	paris := time.FixedZone("CET", 3600)
	at := time.Date(2026, 1, 2, 13, 4, 5, 600, paris)
	obj := &Chassis{UUID: "c", CreatedAt: at, UpdatedAt: &at}
	p, err := r.Serialize(obj, v("1.0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"created_at", "updated_at"} {
		if got := string(p.Data[f]); got != `"2026-01-02T12:04:05.0000006Z"` {
			t.Errorf("%s on the wire = %s", f, got)
		}
	}
	p.Data["updated_at"] = raw(`"2026-01-02T14:04:05+02:00"`)
	got, err := r.Deserialize(p, true)
	if err != nil {
		t.Fatal(err)
	}
	c := got.(*Chassis)
	if c.CreatedAt.Location() != time.UTC || !c.CreatedAt.Equal(at) {
		t.Errorf("created_at = %v", c.CreatedAt)
	}
	if c.UpdatedAt.Location() != time.UTC || c.UpdatedAt.Format(time.RFC3339) != "2026-01-02T12:04:05Z" {
		t.Errorf("updated_at = %v", c.UpdatedAt)
	}
}

// Missing data keys take their defaults: senders may omit unset fields.
func TestDeserializeDefaults(t *testing.T) {
	r := testRegistry(t)
	obj, err := r.Decode([]byte(`{"rivet_object.name":"Node","rivet_object.version":"1.2","rivet_object.data":{"uuid":"u"}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	n := obj.(*Node)
	if n.ProvisionState != "enroll" || n.Extra == nil || len(n.Extra) != 0 || n.Name != nil {
		t.Errorf("defaults not applied: %+v", n)
	}
	if ch := mustChanged(t, r, obj); len(ch) != 0 {
		t.Errorf("changed = %v, want none", ch)
	}
	p, err := r.Serialize(&Port{}, v("1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(raw(`{}`), p.Data["extra"]); diff != "" {
		t.Errorf("nil map not sent as {} (-want +got):\n%s", diff)
	}
}
