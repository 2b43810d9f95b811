package db_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestVolumeModelsMatchSchema is TestModelsMatchSchema for the volume
// tables (REST API 1.32), with their unique constraints: a connector's
// (type, connector_id) and a target's (node_id, boot_index).
func TestVolumeModelsMatchSchema(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		bdb := dbtest.Open(t, d).Bun()
		v := ptr("1.0")
		node := &db.Node{UUID: "10000000-0000-0000-0000-000000000001", Driver: "fake-hardware", Version: v}
		if _, err := bdb.NewInsert().Model(node).Exec(ctx); err != nil {
			t.Fatalf("insert node: %v", err)
		}
		vc := &db.VolumeConnector{UUID: "40000000-0000-0000-0000-000000000001", NodeID: node.ID, Type: "iqn",
			ConnectorID: "iqn.2017-07.org.example:01", Extra: db.JSONObject{"k": "v"}, Version: v}
		vt := &db.VolumeTarget{UUID: "50000000-0000-0000-0000-000000000001", NodeID: node.ID, VolumeType: "iscsi",
			Properties: db.JSONObject{"target_lun": json.Number("0")}, BootIndex: 0, VolumeID: "vol-1",
			Extra: db.JSONObject{"k": "v"}, Version: v}
		for name, m := range map[string]any{"connector": vc, "target": vt} {
			if _, err := bdb.NewInsert().Model(m).Exec(ctx); err != nil {
				t.Fatalf("insert %s: %v", name, err)
			}
		}
		opts := cmp.Options{cmpopts.EquateApproxTime(time.Microsecond), cmpopts.EquateEmpty()}
		gotC, gotT := new(db.VolumeConnector), new(db.VolumeTarget)
		for _, m := range []any{gotC, gotT} {
			if err := bdb.NewSelect().Model(m).Where("id = 1").Scan(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff(vc, gotC, opts); diff != "" {
			t.Errorf("connector round trip (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(vt, gotT, opts); diff != "" {
			t.Errorf("target round trip (-want +got):\n%s", diff)
		}
		dupC := &db.VolumeConnector{UUID: "40000000-0000-0000-0000-000000000002", NodeID: node.ID, Type: "iqn",
			ConnectorID: vc.ConnectorID, Version: v}
		if _, err := bdb.NewInsert().Model(dupC).Exec(ctx); !db.IsUniqueViolation(err) {
			t.Errorf("a second connector with the same type and id: %v, want a unique violation", err)
		}
		dupT := &db.VolumeTarget{UUID: "50000000-0000-0000-0000-000000000002", NodeID: node.ID, VolumeType: "iscsi",
			BootIndex: 0, VolumeID: "vol-2", Version: v}
		if _, err := bdb.NewInsert().Model(dupT).Exec(ctx); !db.IsUniqueViolation(err) {
			t.Errorf("a second target with the same boot index: %v, want a unique violation", err)
		}
	})
}

// TestDestroyNodeFencedVolumes: a node's deletion takes its volume
// connectors and targets with it (they reference the node).
func TestDestroyNodeFencedVolumes(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		n := insertNode(t, dbh, "30000000-0000-0000-0000-000000000002")
		vc := &db.VolumeConnector{UUID: "40000000-0000-0000-0000-000000000003", NodeID: n.ID, Type: "ip", ConnectorID: "10.0.0.1"}
		vt := &db.VolumeTarget{UUID: "50000000-0000-0000-0000-000000000003", NodeID: n.ID, VolumeType: "iscsi", VolumeID: "v"}
		for _, m := range []any{vc, vt} {
			if _, err := dbh.Bun().NewInsert().Model(m).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		epoch, err := dbh.AcquireLease(ctx, n.UUID, "me", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := dbh.DestroyNodeFenced(ctx, n.ID, "me", epoch); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{db.TableVolumeConnectors, db.TableVolumeTargets} {
			left, err := dbh.Bun().NewSelect().Table(table).Where("node_id = ?", n.ID).Count(ctx)
			if err != nil || left != 0 {
				t.Errorf("%s left after destroy: %d, %v", table, left, err)
			}
		}
	})
}
