package db_test

import (
	"context"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestSQLiteReadsPreparedOnce reads a node by UUID and by name and its
// traits many times, from concurrent goroutines: on SQLite each fixed
// statement is prepared once for the pool (3 in all), elsewhere none is,
// and the reads answer the same either way.
func TestSQLiteReadsPreparedOnce(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		s, reg := latestStore(t, dbh)
		obj, _ := reg.New("Node")
		n := obj.(*objects.Node)
		name := "prepared-1"
		n.UUID, n.Name, n.Driver = "61000000-0000-0000-0000-000000000001", &name, "fake-hardware"
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		if err := s.SetNodeTraits(ctx, n.ID, []string{"CUSTOM_B", "CUSTOM_A"}); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				for range 20 {
					for _, ident := range []string{n.UUID, name} {
						got, err := s.GetNode(ctx, ident)
						if err != nil {
							errs <- err
							return
						}
						if got.UUID != n.UUID {
							t.Errorf("GetNode(%s) read %s", ident, got.UUID)
						}
					}
					traits, err := s.NodeTraits(ctx, n.ID)
					if err != nil {
						errs <- err
						return
					}
					if len(traits) != 2 || traits[0] != "CUSTOM_A" || traits[1] != "CUSTOM_B" {
						t.Errorf("traits = %v", traits)
					}
				}
				errs <- nil
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		want := 0
		if d == db.SQLite {
			want = 3
		}
		if got := dbh.PreparedStatements(); got != want {
			t.Errorf("%d statements prepared, want %d", got, want)
		}
	})
}
