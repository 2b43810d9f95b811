package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestNodeInventory: an inventory is stored, a second one replaces it (one
// row per node, as Ironic's create_node_inventory), JSON comes back as
// stored on every dialect, a node without one answers ErrNotFound, and
// destroying the node deletes its inventory (the foreign key would refuse
// otherwise).
func TestNodeInventory(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		n := insertNode(t, dbh, "40000000-0000-0000-0000-000000000001")
		if _, err := dbh.NodeInventoryOf(ctx, n.ID); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("no inventory yet: %v, want ErrNotFound", err)
		}
		first := json.RawMessage(`{"cpu":{"count":2},"interfaces":[{"name":"eth0","mac_address":"52:54:00:00:00:01"}]}`)
		if err := dbh.ReplaceNodeInventory(ctx, n.ID, first, json.RawMessage(`{"root_disk":{"name":"/dev/sda"}}`)); err != nil {
			t.Fatal(err)
		}
		second := json.RawMessage(`{"cpu":{"count":4,"flags":["vmx"]},"memory":{"physical_mb":4096}}`)
		if err := dbh.ReplaceNodeInventory(ctx, n.ID, second, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
		got, err := dbh.NodeInventoryOf(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, got.InventoryData, second) || !jsonEqual(t, got.PluginData, json.RawMessage(`{}`)) {
			t.Errorf("stored %s / %s, want the second inspection's", got.InventoryData, got.PluginData)
		}
		rows, err := dbh.Bun().NewSelect().Table(db.TableNodeInventory).Where("node_id = ?", n.ID).Count(ctx)
		if err != nil || rows != 1 {
			t.Fatalf("rows for the node: %d, %v; want 1", rows, err)
		}
		epoch, err := dbh.AcquireLease(ctx, n.UUID, "me", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := dbh.DestroyNodeFenced(ctx, n.ID, "me", epoch); err != nil {
			t.Fatal(err)
		}
		if _, err := dbh.NodeInventoryOf(ctx, n.ID); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("inventory after the node was destroyed: %v, want ErrNotFound", err)
		}
	})
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
