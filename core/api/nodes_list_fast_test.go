package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// listPair is one database served twice: by an API whose node lists may
// take the fast path, and by one that always takes the general path.
type listPair struct {
	fast, slow http.Handler
	served     *atomic.Int64 // lists the fast path served
	store      *db.Store
}

func newListPair(t *testing.T, d db.Dialect, pinner *release.Pinner) *listPair {
	t.Helper()
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(dbtest.Open(t, d), reg, pinner)
	p := &listPair{served: new(atomic.Int64), store: store}
	for _, slow := range []bool{false, true} {
		h, err := New(Deps{Store: store, Conductor: newFakeConductor(store), Pinner: pinner, MaxLimit: 1000,
			slowNodeList: slow, fastNodeLists: p.served})
		if err != nil {
			t.Fatal(err)
		}
		if slow {
			p.slow = h
		} else {
			p.fast = h
		}
	}
	return p
}

// seedListNodes enrols nodes covering what a list item shows: NULL and
// set names, instance UUIDs, power and target states, maintenance,
// reservations, errors, chassis, every provision state the NOSTATE rule
// cares about, a NULL provision_state, rows written at Node 1.0 (release
// 0.1) with and without interface columns, and strings JSON must escape.
// It returns the node UUIDs and the chassis UUID.
func seedListNodes(t *testing.T, store *db.Store) (uuids []string, chassisUUID string) {
	t.Helper()
	ctx := context.Background()
	reg := store.Registry()
	chObj, _ := reg.New("Chassis")
	ch := chObj.(*objects.Chassis)
	ch.UUID = "6d7f0c1a-5d1e-4a8b-9c0e-3f1e2d3c4b5a"
	if err := store.Create(ctx, ch); err != nil {
		t.Fatal(err)
	}
	tb := release.Default()
	pin01, err := tb.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	old := db.NewStore(store.DB(), reg, release.NewPinner(tb, pin01))
	str := func(s string) *string { return &s }
	provs := []string{"available", "enroll", "manageable", "active", "deploy failed", "available", "cleaning"}
	names := []*string{nil, str("rack1-node1"), str("a<b>&c"), str("zz"), nil, str("ünïcode"), str("line\u2028sep")}
	powers := []*string{nil, str("power on"), str("power off"), nil, str("power on")}
	for i := range 23 {
		obj, _ := reg.New("Node")
		n := obj.(*objects.Node)
		n.UUID = fmt.Sprintf("%08x-1111-4222-8333-%012x", 0xa0000000+i*7919%23, i)
		n.Driver = []string{"fake-hardware", "ipmi", "redfish"}[i%3]
		if nm := names[i%len(names)]; nm != nil {
			n.Name = str(fmt.Sprintf("%s-%d", *nm, i%3))
			if i >= 14 {
				n.Name = str(fmt.Sprintf("%s-%d", *nm, i))
			}
		}
		n.PowerState = powers[i%len(powers)]
		n.ProvisionState = provs[i%len(provs)]
		n.Maintenance = i%4 == 1
		n.ConsoleEnabled = i%5 == 2
		if i%3 == 0 {
			n.InstanceUUID = str(fmt.Sprintf("1be26c0b-03f2-4d2e-ae87-%012x", i))
		}
		if i%4 == 1 {
			n.MaintenanceReason = str(`fan "3" \ broken`)
		}
		if i%6 == 2 {
			n.LastError = str("boom\n\ttab")
			n.TargetPowerState = str("power on")
			n.TargetProvisionState = str("active")
		}
		if i%2 == 0 {
			n.ResourceClass = str([]string{"gold", "silver"}[i%4/2])
			n.NetworkInterface = str("noop")
		}
		if i%5 == 0 {
			n.ChassisID = &ch.ID
		}
		n.DriverInfo = map[string]any{"ipmi_password": "secret", "ipmi_address": "10.0.0.1"}
		s := store
		if i%4 == 3 {
			s = old // written at Node 1.0
		} else {
			n.DeployInterface = str("direct")
		}
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		uuids = append(uuids, n.UUID)
	}
	bdb := store.DB().Bun()
	// A NULL provision_state reads as the object's default, "enroll".
	if _, err := bdb.NewUpdate().Table("nodes").Set("provision_state = NULL").Where("uuid = ?", uuids[4]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// A Node 1.0 row whose 1.1 columns hold values: the upgrade resets them.
	if _, err := bdb.NewUpdate().Table("nodes").Set("deploy_interface = 'direct'").Where("uuid = ?", uuids[3]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// A reservation (only the lease functions write it).
	if _, err := bdb.NewUpdate().Table("nodes").Set("reservation = 'cond-a'").Where("uuid = ?", uuids[5]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return uuids, ch.UUID
}

// nodeListQueries are list queries for version ver over nodes uuids.
func nodeListQueries(uuids []string, chassis string) []string {
	m := uuids[7]
	qs := []string{
		"", "limit=3", "limit=3&marker=" + m, "limit=1000", "marker=" + uuids[len(uuids)-1],
		"sort_key=name", "sort_key=name&sort_dir=desc", "sort_key=name&limit=4&marker=" + m,
		"sort_key=name&sort_dir=desc&limit=4&marker=" + uuids[0],
		"sort_key=provision_state&limit=5&marker=" + uuids[4], "sort_key=power_state&sort_dir=desc&limit=4&marker=" + m,
		"sort_key=uuid&sort_dir=desc&limit=6", "sort_key=id&sort_dir=desc&limit=2&marker=" + m,
		"sort_key=maintenance&limit=7", "sort_key=instance_uuid&limit=3&marker=" + uuids[3],
		"maintenance=true", "maintenance=false&limit=2", "associated=true", "associated=false&sort_key=name",
		"instance_uuid=1be26c0b-03f2-4d2e-ae87-000000000003", "chassis_uuid=" + chassis,
		"provision_state=available", "provision_state=enroll", "driver=ipmi", "resource_class=gold",
		"fields=uuid,name", "fields=power_state", "fields=provision_state,provision_state,links",
		"fields=driver,console_enabled,last_error,maintenance_reason,reservation,target_power_state," +
			"target_provision_state,network_interface,resource_class&limit=5",
		"fields=ports,states,portgroups,uuid", "fields=uuid&limit=2&marker=" + m, "fields=name&sort_key=name",
		"fields=uuid,deploy_interface", "fields=uuid,chassis_uuid", "fields=created_at", "fields=driver_info",
		"marker=6d7f0c1a-0000-4000-8000-000000000000", "limit=0", "sort_key=driver_info", "sort_key=bogus",
		"maintenance=maybe",
	}
	return qs
}

// TestNodeListFastMatchesSlow fails when the node list's fast path writes
// anything other than what the general path (objects, views, selectFields)
// writes: every listed microversion, the default fields and ?fields=,
// filters, sort keys and directions, markers and next links, errors, a
// pinned release, rows at Node 1.0, on every dialect the test can reach.
func TestNodeListFastMatchesSlow(t *testing.T) {
	versions := []string{"", "1.1", "1.2", "1.4", "1.5", "1.8", "1.9", "1.14", "1.16", "1.21", "1.24", "1.31", "latest"}
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
				p := newListPair(t, d, release.NewPinner(tb, pc.pin))
				uuids, chassis := seedListNodes(t, p.store)
				paths := []string{"/v1/nodes", "/v1/chassis/" + chassis + "/nodes"}
				hosts := []string{"rivet.test", `we"ird<&>` + "\u2028host"}
				compared := 0
				for _, ver := range versions {
					for _, path := range paths {
						for _, q := range nodeListQueries(uuids, chassis) {
							for _, host := range hosts {
								target := path
								if q != "" {
									target += "?" + q
								}
								compareList(t, p, host, target, ver)
								compared++
							}
						}
					}
				}
				if p.served.Load() < int64(compared)/4 {
					t.Fatalf("the fast path served %d of %d lists; the comparison proves little", p.served.Load(), compared)
				}
			})
		}
	})
}

// compareList sends one request to both APIs and fails on any difference.
func compareList(t *testing.T, p *listPair, host, target, ver string) {
	t.Helper()
	send := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "http://rivet.test"+target, nil)
		req.Host = host
		req.Header.Set("X-Forwarded-Proto", "https")
		if ver != "" {
			req.Header.Set(HeaderVersion, ver)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	before := p.served.Load()
	fast, slow := send(p.fast), send(p.slow)
	if fast.Code != slow.Code || !bytes.Equal(fast.Body.Bytes(), slow.Body.Bytes()) ||
		fast.Header().Get("Content-Type") != slow.Header().Get("Content-Type") {
		t.Fatalf("GET %s (host %q) @%q: fast path (served fast: %v) %d %s\n\ngeneral path %d %s",
			target, host, ver, p.served.Load() > before, fast.Code, fast.Body, slow.Code, slow.Body)
	}
	// The general path's body is what encoding/json writes for it.
	if slow.Code == http.StatusOK {
		dec := json.NewDecoder(bytes.NewReader(slow.Body.Bytes()))
		dec.UseNumber()
		var body any
		if err := dec.Decode(&body); err != nil {
			t.Fatalf("GET %s @%q: %v", target, ver, err)
		}
		if want := encoderBody(body); !bytes.Equal(slow.Body.Bytes(), want) {
			t.Fatalf("GET %s @%q: body is not encoding/json's:\n%s\n%s", target, ver, slow.Body, want)
		}
	}
	if strings.Contains(target, "fields=uuid,name") && ver == "1.31" && fast.Code == http.StatusOK && p.served.Load() == before {
		u, _ := url.Parse(target)
		t.Fatalf("GET %s: the fast path did not serve a list of scalar fields", u)
	}
}
