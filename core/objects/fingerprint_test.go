package objects

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestFingerprints recomputes every kind's fingerprint from its struct and
// field table and compares it with the one pinned in its declaration.
// Register does the same; this test lists every stale kind at once.
func TestFingerprints(t *testing.T) {
	for _, k := range append(Builtin(), testKinds()...) {
		got, err := ComputeFingerprint(k)
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		if got != k.Fingerprint {
			t.Errorf("%v", &FingerprintError{Kind: k.Name, Declared: k.Fingerprint, Computed: got})
		}
	}
}

// nodeWithFoo is Node with one more field, as a developer might add it.
type nodeWithFoo struct {
	Node
	Foo string `rivet:"foo"`
}

// nodeRetyped is Node whose driver field changed type.
type nodeRetyped struct {
	Node
	Driver int64 `rivet:"driver"`
}

// nodeNameNotNull is Node whose name is no longer nullable.
type nodeNameNotNull struct {
	Node
	Name string `rivet:"name"`
}

// setField edits the field called name in k's table.
func setField(k *Kind, name string, edit func(*Field)) {
	k.Fields = slices.Clone(k.Fields)
	for i := range k.Fields {
		if k.Fields[i].Name == name {
			edit(&k.Fields[i])
		}
	}
}

// TestNodeChangeWithoutBumpFails proves that changing Node without a
// version bump is caught. The developer sees, from go test ./... (or at
// service start, as Install fails):
//
//	objects: kind Node changed: its fingerprint is 1.0-8f53590e5441fc0da07d6d1a2b52fa73 but 1.0-4ad2f3917359cd4a65d404bb698bad04 is declared.
//	A field or remote method of Node was added, removed or changed. Do not edit the fingerprint alone:
//	  1. bump Node's version: append a Step to its Versions and give new fields that Since;
//	  2. add the new version to the HEAD entry of core/release/releases.go;
//	  3. rerun go test ./core/objects and set Node's Fingerprint to the computed value it then prints;
//	  4. regenerate the wire fixtures: go test ./core/objects -run TestGoldenHEAD -update.
//
// (That is the "field added to struct and table" case; adding the struct
// field alone fails earlier: "struct field Foo (rivet:"foo") is missing
// from the field table".)
func TestNodeChangeWithoutBumpFails(t *testing.T) {
	tests := map[string]func(k *Kind){
		"field added to struct and table": func(k *Kind) {
			k.New = func() Object { return new(nodeWithFoo) }
			k.Fields = append(k.Fields, Field{Name: "foo", Since: v("1.0")})
		},
		"field retyped": func(k *Kind) {
			k.New = func() Object { return new(nodeRetyped) }
		},
		"default changed": func(k *Kind) {
			setField(k, "provision_state", func(f *Field) { f.Default = "available" })
		},
		"nullability changed": func(k *Kind) {
			k.New = func() Object { return new(nodeNameNotNull) }
			setField(k, "name", func(f *Field) { f.Nullable = false })
		},
		"remote method added": func(k *Kind) { k.Methods = append(k.Methods, "Save(ctx context.Context) error") },
	}
	pinned := NodeKind().Fingerprint
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			k := NodeKind()
			mutate(&k)
			got, err := ComputeFingerprint(k)
			if err != nil {
				t.Fatalf("the mutated declaration does not build: %v", err)
			}
			if got == pinned {
				t.Fatalf("fingerprint %s did not change", got)
			}
			err = NewRegistry().Register(k)
			var fe *FingerprintError
			if !errors.As(err, &fe) {
				t.Fatalf("Register error = %v, want a *FingerprintError", err)
			}
			for _, want := range []string{"bump Node's version", "core/release/releases.go", got} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message does not tell the developer %q:\n%v", want, err)
				}
			}
		})
	}
}
