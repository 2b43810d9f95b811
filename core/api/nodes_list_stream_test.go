package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

// seedDetailNodes adds to seedListNodes's nodes what only a detailed item
// shows: secrets in driver_info (nested too) and in extra, instance_info's
// image_url and configdrive, URL credentials in properties and texts,
// timestamps, boot mode, steps, network data, owners and lessees, an
// allocation (and one that is gone), a second chassis, and traits.
func seedDetailNodes(t *testing.T, store *db.Store) {
	t.Helper()
	ctx := context.Background()
	reg := store.Registry()
	str := func(s string) *string { return &s }
	chObj, _ := reg.New("Chassis")
	ch := chObj.(*objects.Chassis)
	ch.UUID = "6d7f0c1a-5d1e-4a8b-9c0e-000000000002"
	if err := store.Create(ctx, ch); err != nil {
		t.Fatal(err)
	}
	aObj, _ := reg.New("Allocation")
	alloc := aObj.(*objects.Allocation)
	alloc.UUID, alloc.State = "a110c000-0000-4000-8000-000000000001", "active"
	if err := store.Create(ctx, alloc); err != nil {
		t.Fatal(err)
	}
	gone := alloc.ID + 1000
	owners := []*string{nil, str("p1"), str("p2"), str("p9")}
	when := time.Date(2026, 11, 27, 10, 11, 12, 345678000, time.UTC)
	for i := range 12 {
		obj, _ := reg.New("Node")
		n := obj.(*objects.Node)
		n.UUID = fmt.Sprintf("d0000000-1111-4222-8333-%012x", i)
		n.Driver = "ipmi"
		n.Name = str(fmt.Sprintf("detail-%d", i))
		n.DriverInfo = map[string]any{"ipmi_address": "10.0.0.7", "ipmi_password": "secret",
			"nested": map[string]any{"token": "t", "url": "https://u:p@bmc/x"}, "n": json2(i)}
		n.DriverInternalInfo = map[string]any{"boot_mode": []string{"uefi", "bios"}[i%2], "secure_boot": i%3 == 0}
		n.InstanceInfo = map[string]any{"image_source": "http://images/u.qcow2", "root_gb": 40}
		if i%2 == 0 {
			n.InstanceInfo["image_url"] = "https://swift/temp?sig=x"
			n.InstanceInfo["configdrive"] = map[string]any{"user_data": "x"}
		}
		n.Properties = map[string]any{"cpus": 32, "memory_mb": 131072, "capabilities": "boot_mode:uefi", "f": 1.5}
		n.Extra = map[string]any{"password": "x", "list": []any{"a", 1, nil, true, "ftp://a:b@h/"}}
		n.Owner, n.Lessee = owners[i%4], owners[(i+2)%4]
		n.LastError = str("redfish: Get \"https://admin:hunter2@bmc/redfish\": refused")
		n.MaintenanceReason = str("see http://u:pw@wiki/x")
		n.Description = str(fmt.Sprintf("rack %d, password=abc", i))
		n.ProvisionUpdatedAt, n.InspectionStartedAt = &when, &when
		n.CleanStep = map[string]any{"step": "erase_devices", "priority": 10}
		n.NetworkData = map[string]any{"links": []any{map[string]any{"id": "eth0"}}}
		n.Protected, n.Retired = i%4 == 1, i%5 == 2
		n.ConductorGroup = []string{"", "g1"}[i%2]
		if i%3 == 1 {
			b := i%2 == 0
			n.AutomatedClean = &b
		}
		switch i % 4 {
		case 1:
			n.ChassisID = &ch.ID
		case 2:
			n.AllocationID = &alloc.ID
		case 3:
			n.AllocationID = &gone
		}
		n.ProvisionState = []string{"active", "manageable", "available"}[i%3]
		if err := store.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		if i%3 != 2 {
			if err := store.SetNodeTraits(ctx, n.ID, []string{"CUSTOM_GPU", fmt.Sprintf("CUSTOM_R%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// storedDocuments are JSON documents as another writer than
// encoding/json may have stored them (Ironic's json.dumps, a hand edit):
// the streamed list must write them as the general path does, decoded and
// encoded again, and copy only what that would not change.
var storedDocuments = []string{
	`{"b": 1, "a": "x"}`, `{"b":1,"a":"x"}`, `{"a":"\u00e9"}`, `{"a":"x<y&z"}`, `{"a":1,"a":2}`,
	`{"z":"日本","é":"ü"}`, "{\"a\":\"\xff\"}", `{"a":1.50,"b":-0,"c":1e3}`, ` {"a":1}`, `{}`, ``,
	`{"nested":{"url":"https://u:p@h/"}}`, `{"deep":[{"b":1,"a":2}]}`, `{"image_url":"x"}`,
}

// storeDocuments writes storedDocuments as they are into the JSON columns
// of the nodes seedDetailNodes made, a different one per node and column.
func storeDocuments(t *testing.T, store *db.Store) {
	t.Helper()
	cols := []string{"properties", "extra", "instance_info", "driver_internal_info", "clean_step", "network_data",
		"raid_config", "deploy_step"}
	for i := range 12 {
		for j, col := range cols {
			doc := storedDocuments[(i+j)%len(storedDocuments)]
			_, err := store.DB().Bun().NewUpdate().Table("nodes").Set("? = ?", bun.Ident(col), doc).
				Where("uuid = ?", fmt.Sprintf("d0000000-1111-4222-8333-%012x", i)).Exec(context.Background())
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// json2 is a number as the objects hold one decoded from JSON.
func json2(i int) any { return map[string]any{"slot": i} }

// TestNodeListStreamMatchesGeneral fails when the streamed node list
// (nodes_list_stream.go) writes anything other than the general path
// (objects, nodeView, selectFields, addNodeTraits, writeCollection): the
// detailed list, ?detail=True, ?fields= with documents, secrets,
// timestamps, chassis, allocations, traits and the conductor, the default
// list for a project-scoped reader, filters, pages and next links; at
// every microversion where a field appears; for the system, an owner and
// a lessee (whose view is redacted); unpinned and pinned to 0.1; on every
// dialect the test can reach.
func TestNodeListStreamMatchesGeneral(t *testing.T) {
	versions := []string{"", "1.5", "1.31", "1.37", "1.43", "1.49", "1.52", "1.65", "1.75", "latest"}
	users := []string{"", "sysread", "p1reader", "p2member"}
	tb := release.Default()
	pin01, err := tb.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		for _, pc := range []struct {
			name string
			pin  release.Pin
		}{{"latest", release.Pin{}}, {"pinned-0.1", pin01}} {
			t.Run(pc.name, func(t *testing.T) {
				reg := objects.NewRegistry()
				if err := objects.Install(reg); err != nil {
					t.Fatal(err)
				}
				pinner := release.NewPinner(tb, pc.pin)
				store := db.NewStore(dbtest.Open(t, d), reg, release.NewPinner(tb, release.Pin{}))
				p := &listPair{served: nil, store: store}
				for _, slow := range []bool{false, true} {
					h, err := New(Deps{Store: store, Conductor: newFakeConductor(store), Pinner: pinner, MaxLimit: 1000,
						slowNodeList: slow, Auth: anyPassword{}, Projects: rbacUsers})
					if err != nil {
						t.Fatal(err)
					}
					if slow {
						p.slow = h
					} else {
						p.fast = h
					}
				}
				uuids, chassis := seedListNodes(t, store)
				seedDetailNodes(t, store)
				storeDocuments(t, store)
				queries := []string{
					"/v1/nodes/detail", "/v1/nodes/detail?limit=7", "/v1/nodes/detail?limit=5&marker=" + uuids[7],
					"/v1/nodes/detail?sort_key=name&sort_dir=desc&limit=9", "/v1/nodes/detail?maintenance=false",
					"/v1/nodes/detail?chassis_uuid=" + chassis, "/v1/chassis/" + chassis + "/nodes/detail",
					"/v1/nodes/detail?driver=ipmi", "/v1/nodes/detail?owner=p1", "/v1/nodes/detail?conductor=nowhere",
					"/v1/nodes/detail?fields=uuid", "/v1/nodes?detail=True&limit=10", "/v1/nodes?detail=False",
					"/v1/nodes", "/v1/nodes?limit=4",
					"/v1/nodes?fields=uuid,driver_info,instance_info,extra,properties,last_error",
					"/v1/nodes?fields=uuid,traits", "/v1/nodes?fields=traits,name&limit=3",
					"/v1/nodes?fields=chassis_uuid,allocation_uuid,conductor,owner,lessee",
					"/v1/nodes?fields=created_at,provision_updated_at,inspection_started_at,boot_mode,secure_boot",
					"/v1/nodes?fields=driver_internal_info,reservation,description,maintenance_reason,network_data",
					"/v1/nodes?fields=links,ports,states,portgroups,volume,name",
				}
				compared := 0
				for _, ver := range versions {
					for _, q := range queries {
						for _, user := range users {
							compareListAs(t, p, user, q, ver)
							compared++
						}
					}
				}
				if compared == 0 {
					t.Fatal("nothing compared")
				}
			})
		}
	})
}

// compareListAs sends one request as user (none: no credentials, the
// system admin) to both APIs and fails on any difference.
func compareListAs(t *testing.T, p *listPair, user, target, ver string) {
	t.Helper()
	send := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "http://rivet.test"+target, nil)
		req.Host = `we"ird<&>` + "\u2028host"
		if user != "" {
			req.SetBasicAuth(user, "pw")
		}
		if ver != "" {
			req.Header.Set(HeaderVersion, ver)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	fast, slow := send(p.fast), send(p.slow)
	if fast.Code != slow.Code || !bytes.Equal(fast.Body.Bytes(), slow.Body.Bytes()) ||
		fast.Header().Get("Content-Type") != slow.Header().Get("Content-Type") {
		t.Fatalf("GET %s as %q @%q: streamed %d %s\n\ngeneral path %d %s", target, user, ver, fast.Code, fast.Body, slow.Code, slow.Body)
	}
}

// TestRawNodeDocuments: a node list copies a stored document only when the
// view writes it, no other field of the view reads it, and the view would
// write exactly its bytes (encoding/json's form, nothing masked).
func TestRawNodeDocuments(t *testing.T) {
	planOf := func(names ...string) []streamField {
		var plan []streamField
		table := nodeViewTable()
		for i := range table {
			for _, n := range names {
				if table[i].name == n {
					plan = append(plan, streamField{f: &table[i]})
				}
			}
		}
		if len(plan) != len(names) {
			t.Fatalf("plan of %v has %d fields", names, len(plan))
		}
		return plan
	}
	detail := planOf("uuid", "properties", "extra", "instance_info", "driver_info", "driver_internal_info", "clean_step")
	withBootMode := append(planOf("boot_mode"), detail...)
	tests := map[string]struct {
		plan       []streamField
		field, doc string
		want       bool
	}{
		"clean":                           {detail, "properties", `{"cpus":32,"l":["a",null]}`, true},
		"empty":                           {detail, "clean_step", `{}`, true},
		"not written":                     {detail, "network_data", `{"a":1}`, false},
		"unsorted":                        {detail, "properties", `{"b":1,"a":2}`, false},
		"spaced":                          {detail, "properties", `{"a": 1}`, false},
		"secret key":                      {detail, "extra", `{"x":{"password":"p"}}`, false},
		"URL credentials":                 {detail, "extra", `{"l":["https://u:p@h/"]}`, false},
		"image_url":                       {detail, "instance_info", `{"image_url":"http://i/x"}`, false},
		"image_url elsewhere":             {detail, "extra", `{"image_url":"http://i/x"}`, true},
		"driver_internal_info":            {detail, "driver_internal_info", `{"a":1}`, true},
		"driver_internal_info, boot_mode": {withBootMode, "driver_internal_info", `{"boot_mode":"uefi"}`, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := rawNodeDocuments(tc.plan)(tc.field, tc.doc); got != tc.want {
				t.Errorf("keep(%s, %s) = %v, want %v", tc.field, tc.doc, got, tc.want)
			}
		})
	}
}
