package objects

import (
	"os"
	"path/filepath"

	"github.com/google/go-cmp/cmp"
	"testing"
)

// FuzzDeserialize feeds arbitrary bytes to the wire decoder, as a
// conductor receives them: it must never panic, and whatever it accepts
// must serialize again at the latest version and decode to the same values.
func FuzzDeserialize(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"rivet_object.name":"Widget","rivet_object.version":"1.14","rivet_object.data":{"id":1,"extra":{"a":[1,{"b":null}]}},"rivet_object.changes":["extra"]}`,
		`{"rivet_object.name":"Gadget","rivet_object.version":"1.4","rivet_object.data":{"affected":-9223372036854775808}}`,
		`{"rivet_object.name":"Node","rivet_object.version":"1.0","rivet_object.data":{"created_at":"2026-01-02T14:04:05+02:00","updated_at":null}}`,
		`{"rivet_object.name":"Conductor","rivet_object.version":"1.0","rivet_object.data":{"drivers":null}}`,
		`{"rivet_object.name":"Node","rivet_object.version":"01.0","rivet_object.data":{}}`,
		`null`, `{}`, `[]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	r := testRegistry(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, server := range []bool{true, false} {
			obj, err := r.Decode(b, server)
			if err != nil {
				continue
			}
			latest, err := r.Latest(obj.Kind())
			if err != nil {
				t.Fatal(err)
			}
			again, err := r.Encode(obj, latest)
			if err != nil {
				t.Fatalf("decoded %q but cannot encode it: %v", b, err)
			}
			back, err := r.Decode(again, server)
			if err != nil {
				t.Fatalf("cannot decode own output %s: %v", again, err)
			}
			want, _ := r.Values(obj)
			got, _ := r.Values(back)
			if !cmp.Equal(want, got) {
				t.Fatalf("re-encoding changed the object:\n%v\n%v", want, got)
			}
		}
	})
}
