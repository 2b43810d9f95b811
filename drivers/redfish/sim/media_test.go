package sim

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	cdPath     = "/redfish/v1/Managers/BMC-node-0/VirtualMedia/Cd"
	floppyPath = "/redfish/v1/Managers/BMC-node-0/VirtualMedia/Floppy"
	isoURL     = "https://images.example/ipa.iso"
)

func (g *rig) insert(path string, body any, headers ...string) resp {
	g.t.Helper()
	return g.do(http.MethodPost, path+"/Actions/VirtualMedia.InsertMedia", admin, body, headers...)
}

func (g *rig) eject(path string, headers ...string) resp {
	g.t.Helper()
	return g.do(http.MethodPost, path+"/Actions/VirtualMedia.EjectMedia", admin, map[string]any{}, headers...)
}

func TestVirtualMediaActions(t *testing.T) {
	g := newRig(t, Options{})
	g.insert(cdPath, map[string]any{"Image": isoURL, "WriteProtected": false, "TransferProtocolType": "HTTPS"}).
		want(t, http.StatusNoContent, "")
	r := g.get(cdPath)
	if r.body["Inserted"] != true || str(r.body, "Image") != isoURL || str(r.body, "ConnectedVia") != "URI" ||
		r.body["WriteProtected"] != false || str(r.body, "ImageName") != "ipa.iso" {
		t.Errorf("after insert: %v", r.body)
	}
	g.insert(cdPath, map[string]any{"Image": "http://other.example/x.iso"}).want(t, http.StatusConflict, "ResourceInUse")
	if got := g.state("node-0").Media[0].Image; got != isoURL {
		t.Errorf("a refused insert replaced the image: %s", got)
	}
	g.eject(cdPath).want(t, http.StatusNoContent, "")
	g.eject(cdPath).want(t, http.StatusNoContent, "") // ejecting an empty drive is harmless
	want := []Media{{Slot: "Cd"}, {Slot: "Floppy"}}
	if diff := cmp.Diff(want, g.state("node-0").Media); diff != "" {
		t.Errorf("after eject (-want +got):\n%s", diff)
	}
	r = g.get(cdPath)
	if r.body["Inserted"] != false || r.body["Image"] != nil || str(r.body, "ConnectedVia") != "NotConnected" {
		t.Errorf("after eject: %v", r.body)
	}
	// The other slot is independent.
	g.insert(floppyPath, map[string]any{"Image": "http://images.example/cfg.img"}).want(t, http.StatusNoContent, "")
	if st := g.state("node-0"); !st.Media[1].Inserted || !st.Media[1].WriteProtected || st.Media[0].Inserted {
		t.Errorf("floppy insert: %+v", st.Media)
	}
}

func TestVirtualMediaValidation(t *testing.T) {
	g := newRig(t, Options{})
	tests := map[string]struct {
		body any
		id   string
	}{
		"no image":          {map[string]any{"Inserted": true}, "ActionParameterMissing"},
		"empty image":       {map[string]any{"Image": ""}, "ActionParameterMissing"},
		"ftp image":         {map[string]any{"Image": "ftp://x/y.iso"}, "ActionParameterValueFormatError"},
		"relative image":    {map[string]any{"Image": "y.iso"}, "ActionParameterValueFormatError"},
		"unknown parameter": {map[string]any{"Image": isoURL, "Speed": 3}, "ActionParameterUnknown"},
		"inserted not bool": {map[string]any{"Image": isoURL, "Inserted": "yes"}, "ActionParameterValueFormatError"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g.insert(cdPath, tc.body).want(t, http.StatusBadRequest, tc.id)
		})
	}
	g.do(http.MethodPost, cdPath+"/Actions/VirtualMedia.EjectMedia", admin, map[string]any{"Force": true}).
		want(t, http.StatusBadRequest, "ActionParameterUnknown")
	if st := g.state("node-0"); st.Media[0].Image != "" {
		t.Errorf("a rejected insert changed the slot: %+v", st.Media[0])
	}
}

// TestVirtualMediaPatch covers the PATCH fallback gofish uses when a BMC has
// no actions: {Image, Inserted, WriteProtected} inserts, Inserted=false ejects.
func TestVirtualMediaPatch(t *testing.T) {
	g := newRig(t, Options{})
	g.do(http.MethodPatch, cdPath, admin, map[string]any{"Image": isoURL, "Inserted": true, "WriteProtected": true}).
		want(t, http.StatusNoContent, "")
	if m := g.state("node-0").Media[0]; m.Image != isoURL || !m.Inserted {
		t.Errorf("PATCH insert: %+v", m)
	}
	g.do(http.MethodPatch, cdPath, admin, map[string]any{"Image": isoURL}).want(t, http.StatusConflict, "ResourceInUse")
	g.do(http.MethodPatch, cdPath, admin, map[string]any{"Image": "file:///x.iso"}).want(t, http.StatusBadRequest, "PropertyValueFormatError")
	g.do(http.MethodPatch, cdPath, admin, map[string]any{"Colour": 1}).want(t, http.StatusBadRequest, "PropertyUnknown")
	g.do(http.MethodPatch, cdPath, admin, map[string]any{"Inserted": false, "WriteProtected": false}).
		want(t, http.StatusNoContent, "")
	if m := g.state("node-0").Media[0]; m.Image != "" || m.Inserted {
		t.Errorf("PATCH eject: %+v", m)
	}
}

// TestVirtualMediaETag: a slot has its own ETag, so changing media does not
// make a client's System ETag stale, and a stale slot ETag is refused.
func TestVirtualMediaETag(t *testing.T) {
	g := newRig(t, Options{})
	sysTag := str(g.get(node0).body, "@odata.etag")
	r := g.get(cdPath)
	tag := str(r.body, "@odata.etag")
	if tag == "" || r.header.Get("ETag") != tag {
		t.Fatalf("slot ETag %q header %q", tag, r.header.Get("ETag"))
	}
	g.insert(cdPath, map[string]any{"Image": isoURL}, "If-Match", tag).want(t, http.StatusNoContent, "")
	g.eject(cdPath, "If-Match", tag).want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	if str(g.get(node0).body, "@odata.etag") != sysTag {
		t.Error("inserting media changed the System ETag")
	}
}

// TestSystemVirtualMedia: with the option, the same slots are also reachable
// under the System, each layout naming its own paths; without it they are not.
func TestSystemVirtualMedia(t *testing.T) {
	const sysCd = node0 + "/VirtualMedia/Cd"
	off := newRig(t, Options{})
	off.get(sysCd).want(t, http.StatusNotFound, "ResourceMissingAtURI")
	if _, ok := off.get(node0).body["VirtualMedia"]; ok {
		t.Error("System links VirtualMedia with the option off")
	}

	g := newRig(t, Options{SystemVirtualMedia: true})
	if str(g.get(node0).body, "VirtualMedia", "@odata.id") != node0+"/VirtualMedia" {
		t.Fatalf("System does not link its VirtualMedia")
	}
	if ids := odataIDs(g.get(node0 + "/VirtualMedia").body); len(ids) != 2 || ids[0] != sysCd {
		t.Errorf("members %v", ids)
	}
	g.insert(sysCd, map[string]any{"Image": isoURL}).want(t, http.StatusNoContent, "")
	viaSystem, viaManager := g.get(sysCd), g.get(cdPath)
	if str(viaSystem.body, "@odata.id") != sysCd || str(viaManager.body, "Image") != isoURL {
		t.Errorf("system view %v, manager view %v", viaSystem.body, viaManager.body)
	}
	g.eject(cdPath).want(t, http.StatusNoContent, "")
	if g.get(sysCd).body["Inserted"] != false {
		t.Error("eject through the Manager did not show under the System")
	}
}
