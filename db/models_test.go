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
	"github.com/uptrace/bun"
)

func ptr[T any](v T) *T { return &v }

// TestModelsMatchSchema writes a row of every model with every column set
// and reads it back on each dialect: a model field without a column, a
// column type that loses data (time zones, JSON, booleans) or a NOT NULL
// the model cannot satisfy fails here.
func TestModelsMatchSchema(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		bdb := dbh.Bun()
		at := time.Date(2026, 11, 22, 5, 30, 0, 123456000, time.UTC)
		v := ptr("1.0")

		ch := &db.Chassis{UUID: "c0000000-0000-0000-0000-000000000001", Description: ptr("rack 1"),
			Extra: db.JSONObject{"k": "v"}, Version: v}
		node := &db.Node{
			UUID: "10000000-0000-0000-0000-000000000001", Name: ptr("node-1"), Driver: "redfish",
			DriverInfo:         db.JSONObject{"redfish_address": "https://bmc", "port": json.Number("623")},
			DriverInternalInfo: db.JSONObject{"a": []any{json.Number("1"), "b"}},
			Properties:         db.JSONObject{"cpus": json.Number("8")},
			InstanceUUID:       ptr("i0000000-0000-0000-0000-000000000001"), LastError: ptr("boom"),
			Maintenance: true, MaintenanceReason: ptr("why"), PowerState: ptr("power on"),
			TargetPowerState: ptr("power off"), ProvisionState: ptr("available"),
			TargetProvisionState: ptr("active"), ProvisionUpdatedAt: bun.NullTime{Time: at},
			InspectionStartedAt: bun.NullTime{Time: at}, InspectionFinishedAt: bun.NullTime{Time: at},
			NetworkInterface: ptr("noop"), ResourceClass: ptr("baremetal"), ConsoleEnabled: true,
			ConductorAffinity: ptr(int64(3)), ConductorGroup: "rack1", Version: v,
			BootInterface: ptr("redfish-virtual-media"), ConsoleInterface: ptr("no-console"),
			DeployInterface: ptr("ramdisk"), InspectInterface: ptr("redfish"), ManagementInterface: ptr("redfish"),
			PowerInterface: ptr("redfish"), RAIDInterface: ptr("no-raid"), VendorInterface: ptr("no-vendor"),
		}
		if _, err := bdb.NewInsert().Model(ch).Exec(ctx); err != nil {
			t.Fatalf("insert chassis: %v", err)
		}
		node.ChassisID = &ch.ID
		pg := &db.Portgroup{UUID: "30000000-0000-0000-0000-000000000001", Name: ptr("bond0"),
			Address: ptr("52:54:00:00:00:01"), Mode: ptr("802.3ad"), StandalonePortsSupported: true,
			Properties: db.JSONObject{"miimon": json.Number("100")}, Version: v}
		port := &db.Port{UUID: "20000000-0000-0000-0000-000000000001", Address: "52:54:00:00:00:02",
			PXEEnabled: true, LocalLinkConnection: db.JSONObject{"switch_id": "s1"}, Version: v}
		cond := &db.Conductor{Hostname: "cond-1", ConductorGroup: "rack1", Online: true,
			Drivers: db.JSONStrings{"ipmi", "redfish"}, Version: v}
		trait := &db.Trait{Trait: "CUSTOM_GPU", Version: v}
		steps := db.JSONList{{"interface": "bios", "step": "apply_configuration", "priority": json.Number("150"),
			"args": map[string]any{"settings": []any{map[string]any{"name": "x", "value": "y"}}}}}
		tmpl := &db.DeployTemplate{UUID: "40000000-0000-0000-0000-000000000001", Name: "CUSTOM_HT_ON", Steps: steps,
			Extra: db.JSONObject{"k": "v"}, Version: v}
		rb := &db.Runbook{UUID: "50000000-0000-0000-0000-000000000001", Name: "CUSTOM_RB", Steps: steps,
			DisableRamdisk: ptr(true), Extra: db.JSONObject{"k": "v"}, Public: ptr(false), Owner: ptr("proj"), Version: v}
		rule := &db.InspectionRule{UUID: "60000000-0000-0000-0000-000000000001", Priority: 100, Description: ptr("BMC"),
			Sensitive: ptr(true), Phase: ptr("main"), Conditions: db.JSONList{{"op": "is-true", "args": map[string]any{"value": "{node.maintenance}"}}},
			Actions: db.JSONList{{"op": "add-trait", "args": map[string]any{"name": "CUSTOM_X"}}}, Version: v}
		rows := []struct {
			name  string
			model any
			pre   func()
		}{
			{"node", node, nil},
			{"portgroup", pg, func() { pg.NodeID = node.ID }},
			{"port", port, func() { port.NodeID = node.ID; port.PortgroupID = &pg.ID }},
			{"conductor", cond, nil},
			{"trait", trait, func() { trait.NodeID = node.ID }},
			{"deploy template", tmpl, nil},
			{"runbook", rb, nil},
			{"inspection rule", rule, nil},
		}
		for _, s := range rows {
			if s.pre != nil {
				s.pre()
			}
			if _, err := bdb.NewInsert().Model(s.model).Exec(ctx); err != nil {
				t.Fatalf("insert %s: %v", s.name, err)
			}
		}
		hw := &db.ConductorHardwareInterface{ConductorID: cond.ID, HardwareType: "redfish",
			InterfaceType: "power", InterfaceName: "redfish", IsDefault: true}
		if _, err := bdb.NewInsert().Model(hw).Exec(ctx); err != nil {
			t.Fatalf("insert hardware interface: %v", err)
		}

		opts := cmp.Options{cmpopts.EquateApproxTime(time.Microsecond), cmpopts.EquateEmpty()}
		check := func(name string, want, got any, id int64) {
			t.Helper()
			if err := bdb.NewSelect().Model(got).Where("id = ?", id).Scan(ctx); err != nil {
				t.Fatalf("select %s: %v", name, err)
			}
			if diff := cmp.Diff(want, got, opts); diff != "" {
				t.Errorf("%s round trip (-want +got):\n%s", name, diff)
			}
		}
		check("chassis", ch, new(db.Chassis), ch.ID)
		check("node", node, new(db.Node), node.ID)
		check("portgroup", pg, new(db.Portgroup), pg.ID)
		check("port", port, new(db.Port), port.ID)
		check("conductor", cond, new(db.Conductor), cond.ID)
		check("hardware interface", hw, new(db.ConductorHardwareInterface), hw.ID)
		check("trait", trait, new(db.Trait), trait.ID)
		check("deploy template", tmpl, new(db.DeployTemplate), tmpl.ID)
		check("runbook", rb, new(db.Runbook), rb.ID)
		check("inspection rule", rule, new(db.InspectionRule), rule.ID)
	})
}

// TestEmptyJSONIsStoredAsObject: Ironic stores {} for an empty dict, never
// the text null, and the API relies on reading back an object.
func TestEmptyJSONIsStoredAsObject(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		n := &db.Node{UUID: "10000000-0000-0000-0000-000000000009", Driver: "fake-hardware"}
		if _, err := dbh.Bun().NewInsert().Model(n).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var raw struct {
			DriverInfo string `bun:"driver_info"`
			CleanStep  string `bun:"clean_step"`
		}
		if err := dbh.Bun().NewSelect().Table("nodes").Column("driver_info", "clean_step").
			Where("id = ?", n.ID).Scan(ctx, &raw.DriverInfo, &raw.CleanStep); err != nil {
			t.Fatal(err)
		}
		if raw.DriverInfo != "{}" || raw.CleanStep != "{}" {
			t.Errorf("empty JSON stored as %q, %q; want {}", raw.DriverInfo, raw.CleanStep)
		}
		if n.CreatedAt.IsZero() || n.CreatedAt.Location() != time.UTC {
			t.Errorf("created_at not stamped in UTC: %v", n.CreatedAt)
		}
	})
}
