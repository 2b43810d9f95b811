package conductor

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// Reproduction C of issue 23, at the conductor: pinned to 0.1 it saves
// nodes at Node 1.0, which has no interface fields. An unpinned API's
// create or update setting one (the API should never have served 1.31
// beside it: db/upgrade.Guard refuses that, but an auto pin moves between
// heartbeats) used to be stored without it and answered as a success. It
// is now refused with 406, naming the fields, and nothing is written;
// writes it can store still go through.
func TestPinnedConductorRefusesWhatItCannotStore(t *testing.T) {
	ctx := context.Background()
	dbh := dbtest.Open(t, db.SQLite)
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	tb := dbtest.Releases(t)
	pin, err := tb.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(tb, pin)
	store := db.NewStore(dbh, reg, pinner)
	svc, err := New(testConfig("cond-p"), Deps{Store: store, Drivers: StaticDrivers{fake.HardwareType: &hookedFake{Driver: fake.New(nil)}},
		Pinner: pinner, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop(ctx) })
	unpinned := release.NewPinner(tb, release.Pin{Mode: release.PinLatest})
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return unpinned.Effective().RPC },
		rpc.ObjectCodecFor(reg, unpinned), rpc.LocalTransport{Server: svc.RPCServer()})
	api := rpc.ConductorAPI{Client: client, Router: rpc.NewRouter(svc.listConductors, 5, time.Hour)}
	refused := func(err error, what string) {
		t.Helper()
		var c rpc.Classed
		if !errors.As(err, &c) || c.HTTPCode() != http.StatusNotAcceptable ||
			!strings.Contains(err.Error(), "rivet-conductor on cond-p stores Node objects at version 1.0 (release 0.1") ||
			!strings.Contains(err.Error(), "which has no inspect_interface: the change would be lost") {
			t.Fatalf("%s: %v, want a 406 naming inspect_interface", what, err)
		}
	}
	stored := func(uuid string) *objects.Node {
		t.Helper()
		n, err := store.GetNode(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	inspect := "no-inspect"
	_, err = api.CreateNode(ctx, &objects.Node{UUID: "0b5b1f8c-5d0c-4bde-9d5e-0c0f3a1e2d11", Driver: fake.HardwareType, InspectInterface: &inspect})
	refused(err, "create_node with inspect_interface")
	if _, err := store.GetNode(ctx, "0b5b1f8c-5d0c-4bde-9d5e-0c0f3a1e2d11"); err == nil {
		t.Fatal("the refused create stored the node")
	}

	n, err := api.CreateNode(ctx, &objects.Node{Driver: fake.HardwareType})
	if err != nil {
		t.Fatalf("create_node of what 0.1 stores: %v", err)
	}
	upd := stored(n.UUID)
	upd.Extra = map[string]any{"rack": "r7"}
	if _, err := api.UpdateNode(ctx, upd); err != nil {
		t.Fatalf("update_node of what 0.1 stores: %v", err)
	}
	upd = stored(n.UUID)
	upd.InspectInterface = &inspect
	_, err = api.UpdateNode(ctx, upd)
	refused(err, "update_node of inspect_interface")
	if got := stored(n.UUID); got.InspectInterface != nil || got.Extra["rack"] != "r7" {
		t.Fatalf("after the refused update: inspect %v, extra %v", deref(got.InspectInterface), got.Extra)
	}
}
