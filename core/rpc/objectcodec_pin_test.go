package rpc

import (
	"encoding/json"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// Pinned to 0.1, objects cross the wire at Node 1.0: the interface fields
// of Node 1.1 are not sent, and the receiver, converting up, holds them
// unset. Unpinned, they travel.
func TestObjectCodecFollowsThePin(t *testing.T) {
	reg, tb := dbtest.Registry(t), dbtest.Releases(t)
	pin, err := tb.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(tb, pin)
	codec := ObjectCodecFor(reg, pinner)
	obj, _ := reg.New("Node")
	n := obj.(*objects.Node)
	n.UUID, n.Driver = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "fake-hardware"
	deploy := "fake"
	n.DeployInterface = &deploy

	for _, tc := range []struct {
		pin     release.Pin
		version string
		sent    bool
	}{{pin, "1.0", false}, {release.Pin{Mode: release.PinLatest}, "1.2", true}} {
		pinner.Set(tc.pin, nil)
		raw, isObj, err := codec.Encode(n)
		if err != nil || !isObj {
			t.Fatalf("encode: %v %v", isObj, err)
		}
		var prim struct {
			Version string                     `json:"rivet_object.version"`
			Data    map[string]json.RawMessage `json:"rivet_object.data"`
		}
		if err := json.Unmarshal(raw, &prim); err != nil {
			t.Fatal(err)
		}
		if _, has := prim.Data["deploy_interface"]; prim.Version != tc.version || has != tc.sent {
			t.Fatalf("pin %s: sent Node %s with deploy_interface %v", tc.pin, prim.Version, has)
		}
		got, err := codec.Decode(raw, true)
		if err != nil {
			t.Fatal(err)
		}
		if d := got.(*objects.Node).DeployInterface; (d != nil) != tc.sent {
			t.Fatalf("pin %s: received deploy_interface %v", tc.pin, d)
		}
	}
}
