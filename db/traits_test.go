package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestNodeTraits sets, adds and removes a node's traits on every dialect:
// rows carry the Trait version, a list reads many nodes in one query, the
// per-node maximum refuses a change whole, and removing a trait the node
// lacks removes nothing.
func TestNodeTraits(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		s, _ := latestStore(t, dbh)
		var ids []int64
		for i := range 2 {
			n := &db.Node{UUID: fmt.Sprintf("60000000-0000-0000-0000-%012d", i), Driver: "fake-hardware"}
			if _, err := dbh.Bun().NewInsert().Model(n).ExcludeColumn("reservation", "reservation_expires_at", "reservation_epoch").Exec(ctx); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, n.ID)
		}
		get := func(id int64) []string {
			t.Helper()
			got, err := s.NodeTraits(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if err := s.SetNodeTraits(ctx, ids[0], []string{"CUSTOM_B", "CUSTOM_A", "CUSTOM_B"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddNodeTraits(ctx, ids[0], []string{"CUSTOM_A", "CUSTOM_C"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddNodeTraits(ctx, ids[1], []string{"HW_CPU_X86_AVX2"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"CUSTOM_A", "CUSTOM_B", "CUSTOM_C"}, get(ids[0])); diff != "" {
			t.Errorf("traits (-want +got):\n%s", diff)
		}
		all, err := s.TraitsOfNodes(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[int64][]string{ids[0]: {"CUSTOM_A", "CUSTOM_B", "CUSTOM_C"}, ids[1]: {"HW_CPU_X86_AVX2"}}, all); diff != "" {
			t.Errorf("traits of nodes (-want +got):\n%s", diff)
		}
		var versions []string
		if err := dbh.Bun().NewSelect().Table("node_traits").Column("version").Scan(ctx, &versions); err != nil {
			t.Fatal(err)
		}
		for _, v := range versions {
			if v != "1.0" {
				t.Errorf("trait row written at version %q, want 1.0", v)
			}
		}

		var missing *db.TraitNotFoundError
		if err := s.RemoveNodeTraits(ctx, ids[0], []string{"CUSTOM_A", "CUSTOM_Z"}); !errors.As(err, &missing) || missing.Trait != "CUSTOM_Z" {
			t.Fatalf("removing a missing trait: %v", err)
		}
		if len(get(ids[0])) != 3 {
			t.Errorf("a refused removal removed traits: %v", get(ids[0]))
		}
		if err := s.RemoveNodeTraits(ctx, ids[0], []string{"CUSTOM_A"}); err != nil {
			t.Fatal(err)
		}

		many := make([]string, 49)
		for i := range many {
			many[i] = fmt.Sprintf("CUSTOM_T%02d", i)
		}
		var tooMany *db.TooManyTraitsError
		if err := s.AddNodeTraits(ctx, ids[0], many); !errors.As(err, &tooMany) || tooMany.Count != 51 {
			t.Fatalf("adding past the maximum: %v", err)
		}
		if err := s.SetNodeTraits(ctx, ids[0], append(many, "CUSTOM_X", "CUSTOM_Y")); !errors.As(err, &tooMany) {
			t.Fatalf("setting past the maximum: %v", err)
		}
		if diff := cmp.Diff([]string{"CUSTOM_B", "CUSTOM_C"}, get(ids[0])); diff != "" {
			t.Errorf("refused changes changed the traits (-want +got):\n%s", diff)
		}
		if err := s.RemoveNodeTraits(ctx, ids[0], nil); err != nil {
			t.Fatal(err)
		}
		if got := get(ids[0]); len(got) != 0 {
			t.Errorf("after removing all: %v", got)
		}
	})
}
