package objects

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFromDBReadOnly: an old row read read-only converts as FromDB
// converts it, has no snapshot, and every path to a save refuses it
// (ForDB, ForInsert, ResetChanges), copies included.
func TestFromDBReadOnly(t *testing.T) {
	r := testRegistry(t)
	tracked := &Widget{ID: 1, Name: "w1", Extra: map[string]any{"owner": "ops"}}
	if err := r.FromDB(tracked, v("1.14")); err != nil {
		t.Fatal(err)
	}
	ro := &Widget{ID: 1, Name: "w1", Extra: map[string]any{"owner": "ops"}}
	if err := r.FromDBReadOnly(ro, v("1.14")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(values(t, r, tracked), values(t, r, ro)); diff != "" {
		t.Errorf("read-only load differs from FromDB (-FromDB +read-only):\n%s", diff)
	}
	if !ro.Changes().ReadOnly() || ro.Changes().HasSnapshot() {
		t.Fatalf("read-only %v, snapshot %v; want read-only without one", ro.Changes().ReadOnly(), ro.Changes().HasSnapshot())
	}
	if tracked.Changes().ReadOnly() {
		t.Fatal("FromDB loaded read-only")
	}
	cp, err := r.Copy(ro)
	if err != nil {
		t.Fatal(err)
	}
	for name, obj := range map[string]Object{"loaded": ro, "copy": cp} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := r.ForDB(obj, v("1.16")); !errors.Is(err, ErrReadOnly) {
				t.Errorf("ForDB = %v, want ErrReadOnly", err)
			}
			if _, err := r.ForInsert(obj, v("1.16")); !errors.Is(err, ErrReadOnly) {
				t.Errorf("ForInsert = %v, want ErrReadOnly", err)
			}
			if err := r.ResetChanges(obj); !errors.Is(err, ErrReadOnly) {
				t.Errorf("ResetChanges = %v, want ErrReadOnly", err)
			}
		})
	}
	if _, _, err := r.ForDB(tracked, v("1.16")); err != nil {
		t.Errorf("ForDB of a tracked object: %v", err)
	}
	if err := r.FromDBReadOnly(&Widget{}, v("1.99")); err == nil {
		t.Error("a version this code cannot convert was read")
	}
}
