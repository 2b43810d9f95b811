package objects

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Decode's own reading of a primitive (names taken from the registry,
// fields walked in table order, snapshots sharing empty maps) must build
// exactly the object the code before it built: decodeStd is Decode as it
// was, ParsePrimitive's std reading followed by Deserialize's loop over
// sorted keys on a defaulted object and a deep-copied snapshot.

func decodeStd(r *Registry, b []byte, server bool) (Object, error) {
	p, err := parsePrimitiveStd(b)
	if err != nil {
		return nil, err
	}
	kd, err := r.lookup(p.Name)
	if err != nil {
		return nil, err
	}
	if err := kd.check(p.Version); err != nil {
		return nil, err
	}
	obj := kd.newDefault()
	base := reflect.ValueOf(obj).Elem()
	keys := make([]string, 0, len(p.Data))
	for k := range p.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic errors
	for _, k := range keys {
		fi, ok := kd.byName[k]
		if !ok || !fi.availableAt(p.Version) {
			return nil, &UnknownFieldError{Kind: kd.Name, Version: p.Version, Field: k}
		}
		if err := decodeValue(fi, fi.in(base), p.Data[k]); err != nil {
			return nil, &MalformedError{Kind: kd.Name, Field: k, Err: err}
		}
	}
	resetChangesStd(kd, obj)
	for _, f := range p.Changes {
		fi, ok := kd.byName[f]
		if !ok || !fi.availableAt(p.Version) {
			return nil, &UnknownFieldError{Kind: kd.Name, Version: p.Version, Field: f}
		}
		obj.Changes().Mark(f)
	}
	marked, err := kd.convert(obj, p.Version, kd.latest(), !server)
	if err != nil {
		return nil, err
	}
	switch {
	case server:
		obj.Changes().mark(marked)
	case p.Version != kd.latest():
		resetChangesStd(kd, obj)
	}
	return obj, nil
}

// resetChangesStd is resetChanges with a deep copy of every field.
func resetChangesStd(kd *kind, obj Object) {
	snap := kd.New()
	dst, src := reflect.ValueOf(snap).Elem(), reflect.ValueOf(obj).Elem()
	for _, fi := range kd.fields {
		fi.copyInto(fi.in(dst), fi.in(src))
	}
	*obj.Changes() = ChangeSet{snapshot: snap}
}

// checkDecodeStd fails t when Decode and decodeStd read b differently: an
// error of another type or message, or objects with other values, other
// changes, or changes that move differently once every field is modified.
func checkDecodeStd(t *testing.T, r *Registry, b []byte) {
	t.Helper()
	decoders := map[string]func([]byte, bool) (Object, error){"Decode": r.Decode}
	for name, decode := range decoders {
		for _, server := range []bool{true, false} {
			got, gotErr := decode(bytes.Clone(b), server)
			want, wantErr := decodeStd(r, bytes.Clone(b), server)
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && fmt.Sprintf("%T %v", gotErr, gotErr) != fmt.Sprintf("%T %v", wantErr, wantErr) {
				t.Fatalf("%s(%q, %v): error %v, want %v", name, b, server, gotErr, wantErr)
			}
			if gotErr != nil {
				continue
			}
			compareObjects(t, r, got, want, fmt.Sprintf("%s(%q, %v)", name, b, server))
		}
	}
}

// compareObjects fails t unless got and want hold the same values and
// report the same changes, before and after every map field of theirs
// gains a key (what a snapshot shared between objects would miss).
func compareObjects(t *testing.T, r *Registry, got, want Object, what string) {
	t.Helper()
	if reflect.TypeOf(got) != reflect.TypeOf(want) {
		t.Fatalf("%s: %T, want %T", what, got, want)
	}
	for step := range 2 {
		gv, _ := r.Values(got)
		wv, _ := r.Values(want)
		if d := cmp.Diff(wv, gv); d != "" {
			t.Fatalf("%s (step %d): values differ (-want +got):\n%s", what, step, d)
		}
		gc, _ := r.Changed(got)
		wc, _ := r.Changed(want)
		if !slices.Equal(gc, wc) || got.Changes().HasSnapshot() != want.Changes().HasSnapshot() {
			t.Fatalf("%s (step %d): changed %q, want %q", what, step, gc, wc)
		}
		for _, obj := range []Object{got, want} {
			base := reflect.ValueOf(obj).Elem()
			for _, fi := range r.kinds[obj.Kind()].fields {
				if m, ok := fi.in(base).Interface().(map[string]any); ok && m != nil {
					m["added-by-test"] = true
				}
			}
		}
	}
	if len(emptySnapshotMap) != 0 {
		t.Fatalf("%s: the shared empty snapshot map was written to: %v", what, emptySnapshotMap)
	}
}

func TestDecodeMatchesStd(t *testing.T) {
	r := testRegistry(t)
	inputs := primitiveSeeds(t)
	// What enrolment sends: a new node, every field a change.
	for _, name := range []string{"Node", "Port", "Chassis"} {
		obj, err := r.New(name)
		if err != nil {
			t.Fatal(err)
		}
		latest, _ := r.Latest(name)
		b, err := r.Encode(obj, latest)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	for _, b := range inputs {
		checkDecodeStd(t, r, b)
	}
}

func FuzzDecodeMatchesStd(f *testing.F) {
	for _, s := range primitiveSeeds(f) {
		f.Add(s)
	}
	r := testRegistry(f)
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeStd(t, r, b) })
}
