package db_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestGetNodeWithTraits holds the one-statement read of a node and its
// traits equal to GetNode and NodeTraits on every dialect: a node with the
// most traits a node may have, each of the longest length, in an order
// the database's collation decides (lower and upper case, underscores,
// characters JSON escapes); a node without traits ([] not nil); by UUID
// and by name; and the same error for a missing node.
func TestGetNodeWithTraits(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		s, reg := latestStore(t, dbh)
		versions, err := reg.Versions("Node")
		if err != nil {
			t.Fatal(err)
		}
		version := versions[len(versions)-1].String()
		var nodes []*db.Node
		for i := range 2 {
			name := fmt.Sprintf("node-%d", i)
			n := &db.Node{UUID: fmt.Sprintf("61000000-0000-0000-0000-%012d", i), Name: &name, Driver: "fake-hardware", Version: &version}
			if _, err := dbh.Bun().NewInsert().Model(n).ExcludeColumn("reservation", "reservation_expires_at", "reservation_epoch").Exec(ctx); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, n)
		}
		var traits []string
		for i := range 49 {
			head := fmt.Sprintf("CUSTOM_%c%02d", "aB_c"[i%4], 49-i)
			traits = append(traits, head+strings.Repeat("X", 255-len(head)))
		}
		traits = append(traits, `CUSTOM_"Q\`)
		// One by one, last first: the rows' order is not the traits'.
		for i := len(traits) - 1; i >= 0; i-- {
			if err := s.AddNodeTraits(ctx, nodes[0].ID, traits[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range nodes {
			for _, ident := range []string{n.UUID, *n.Name} {
				wantNode, err := s.GetNode(ctx, ident)
				if err != nil {
					t.Fatal(err)
				}
				wantTraits, err := s.NodeTraits(ctx, n.ID)
				if err != nil {
					t.Fatal(err)
				}
				gotNode, gotTraits, err := s.GetNodeWithTraits(ctx, ident)
				if err != nil {
					t.Fatalf("%s: %v", ident, err)
				}
				if !reflect.DeepEqual(wantNode, gotNode) {
					t.Errorf("%s: node differs:\nGetNode           %+v\nGetNodeWithTraits %+v", ident, wantNode, gotNode)
				}
				if diff := cmp.Diff(wantTraits, gotTraits); diff != "" {
					t.Errorf("%s: traits differ from NodeTraits' (-want +got):\n%s", ident, diff)
				}
				if gotTraits == nil {
					t.Errorf("%s: traits are nil, want []", ident)
				}
			}
		}
		if got, _ := s.NodeTraits(ctx, nodes[0].ID); len(got) != len(traits) {
			t.Fatalf("the node has %d traits, want %d", len(got), len(traits))
		}
		for _, ident := range []string{"61000000-0000-0000-0000-999999999999", "no-such-node"} {
			_, werr := s.GetNode(ctx, ident)
			_, _, gerr := s.GetNodeWithTraits(ctx, ident)
			if werr == nil || fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Errorf("%s: GetNode %v, GetNodeWithTraits %v", ident, werr, gerr)
			}
		}
	})
}
