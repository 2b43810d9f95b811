package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// mgmt2Client talks to an API test server at a chosen microversion.
type mgmt2Client struct {
	t   *testing.T
	url string
}

func newMgmt2Stack(t *testing.T, drivers conductor.DriverSet) *mgmt2Client {
	t.Helper()
	if drivers == nil {
		drivers = conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}
	}
	srv := httptest.NewServer(newStackWith(t, release.NewPinner(release.Default(), release.Pin{}), drivers, api.WithTestMaxAPI("1.93")))
	t.Cleanup(srv.Close)
	return &mgmt2Client{t: t, url: srv.URL}
}

func (c *mgmt2Client) do(method, path, ver, body string, want int) []byte {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.url+path, strings.NewReader(body))
	req.Header.Set(api.HeaderVersion, ver)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s at %s %s: %d, want %d: %s", method, path, ver, body, resp.StatusCode, want, raw)
	}
	return raw
}

func (c *mgmt2Client) obj(method, path, ver, body string, want int) map[string]any {
	c.t.Helper()
	var out map[string]any
	_ = json.Unmarshal(c.do(method, path, ver, body, want), &out)
	return out
}

// fault returns the faultstring of an Ironic error body.
func (c *mgmt2Client) fault(method, path, ver, body string, want int) string {
	c.t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	if json.Unmarshal(c.do(method, path, ver, body, want), &outer) != nil || json.Unmarshal([]byte(outer.ErrorMessage), &inner) != nil {
		c.t.Fatalf("%s %s: not Ironic's error body", method, path)
	}
	return inner.Faultstring
}

// settle polls n1 at 1.76 until no lease is held and returns it.
func (c *mgmt2Client) settle() map[string]any {
	c.t.Helper()
	return c.settleNode("n1")
}

// settleNode is settle for the node named name.
func (c *mgmt2Client) settleNode(name string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := c.obj("GET", "/v1/nodes/"+name, "1.76", "", http.StatusOK)
		if n["reservation"] == nil {
			return n
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %s still reserved: %v", name, n["reservation"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestV1_76SetBootModeAndSecureBoot: PUT .../states/boot_mode and
// .../states/secure_boot (1.76) are 404 below 1.76; at 1.76 they answer
// 202 with Location, the conductor sets them through the driver in the
// background and the node shows them as boot_mode and secure_boot (1.75);
// a driver refusal (secure boot with legacy BIOS) lands in last_error;
// invalid targets are 400, as Ironic (a transitioning node's 409:
// TestBootModeTransitioning).
func TestV1_76SetBootModeAndSecureBoot(t *testing.T) {
	c := newMgmt2Stack(t, nil)
	c.do("POST", "/v1/nodes", "1.76", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
	if n := c.obj("GET", "/v1/nodes/n1", "1.76", "", http.StatusOK); n["boot_mode"] != nil || n["secure_boot"] != nil {
		t.Fatalf("new node: boot_mode %v, secure_boot %v; want null, null", n["boot_mode"], n["secure_boot"])
	}
	if got := c.fault("PUT", "/v1/nodes/n1/states/boot_mode", "1.75", `{"target":"bios"}`, http.StatusNotFound); !strings.Contains(got, "1.76") {
		t.Errorf("1.75: %q", got)
	}
	c.do("PUT", "/v1/nodes/n1/states/secure_boot", "1.75", `{"target":true}`, http.StatusNotFound)

	for body, want := range map[string]string{
		`{"target":"efi"}`:         "Invalid boot mode efi requested for node. Allowed boot modes are: uefi, bios",
		`{}`:                       "Mandatory field missing",
		`{"target":"uefi","x":1}`:  "Unknown attribute",
		`{"target":["uefi"]}`:      "Wrong type",
		`{"target":"UEFI"}`:        "Invalid boot mode UEFI",
		`{"target":null}`:          "Mandatory field missing",
		`{"target":"bios","y":""}`: "Unknown attribute",
	} {
		if got := c.fault("PUT", "/v1/nodes/n1/states/boot_mode", "1.76", body, http.StatusBadRequest); !strings.Contains(got, want) {
			t.Errorf("boot_mode %s: %q, want %q", body, got, want)
		}
	}
	for _, body := range []string{`{"target":"maybe"}`, `{}`, `{"target":null}`, `{"target":2}`} {
		if got := c.fault("PUT", "/v1/nodes/n1/states/secure_boot", "1.76", body, http.StatusBadRequest); !strings.Contains(got, "Invalid secure_boot") {
			t.Errorf("secure_boot %s: %q", body, got)
		}
	}

	req, _ := http.NewRequest("PUT", c.url+"/v1/nodes/n1/states/boot_mode", strings.NewReader(`{"target":"bios"}`))
	req.Header.Set(api.HeaderVersion, "1.76")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || !strings.HasSuffix(resp.Header.Get("Location"), "/v1/nodes/n1/states") {
		t.Fatalf("boot_mode bios: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := c.settle(); n["boot_mode"] != "bios" || n["last_error"] != nil {
		t.Fatalf("after bios: boot_mode %v, last_error %v", n["boot_mode"], n["last_error"])
	}
	// The fake firmware refuses secure boot with legacy BIOS: last_error.
	c.do("PUT", "/v1/nodes/n1/states/secure_boot", "1.76", `{"target":true}`, http.StatusAccepted)
	if n := c.settle(); n["secure_boot"] == true || !strings.Contains(str(n["last_error"]), "Failed to change secure_boot state to 'true'") ||
		!strings.Contains(str(n["last_error"]), "secure boot needs UEFI") {
		t.Fatalf("secure boot on bios: secure_boot %v, last_error %v", n["secure_boot"], n["last_error"])
	}
	c.do("PUT", "/v1/nodes/n1/states/boot_mode", "1.76", `{"target":"uefi"}`, http.StatusAccepted)
	c.do("PUT", "/v1/nodes/n1/states/secure_boot", "1.76", `{"target":"on"}`, http.StatusAccepted) // Ironic's args.boolean
	n := c.settle()
	if n["boot_mode"] != "uefi" || n["secure_boot"] != true || n["last_error"] != nil {
		t.Fatalf("after uefi + secure boot: boot_mode %v, secure_boot %v, last_error %v", n["boot_mode"], n["secure_boot"], n["last_error"])
	}
	// Verifying a node (manage) reads them from the BMC (Ironic's
	// node_update_cache): a new node's nulls become the fake BMC's values.
	c.do("POST", "/v1/nodes", "1.76", `{"name":"n2","driver":"fake-hardware"}`, http.StatusCreated)
	c.do("PUT", "/v1/nodes/n2/states/provision", "1.76", `{"target":"manage"}`, http.StatusAccepted)
	if n := c.settleNode("n2"); n["provision_state"] != "manageable" || n["boot_mode"] != "uefi" || n["secure_boot"] != false {
		t.Fatalf("after manage: %v, boot_mode %v, secure_boot %v", n["provision_state"], n["boot_mode"], n["secure_boot"])
	}
	// Below 1.75 the fields stay hidden.
	if n := c.obj("GET", "/v1/nodes/n1", "1.74", "", http.StatusOK); n["boot_mode"] != nil || n["secure_boot"] != nil {
		t.Errorf("1.74 shows boot_mode/secure_boot: %v", n)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// TestV1_63Indicators: GET .../management/indicators lists every
// indicator as "name@component" with its states and links; GET and PUT of
// one read and set it through the driver; below 1.63 they are 404; bad
// states and names are 400.
func TestV1_63Indicators(t *testing.T) {
	c := newMgmt2Stack(t, nil)
	c.do("POST", "/v1/nodes", "1.63", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
	c.do("GET", "/v1/nodes/n1/management/indicators", "1.62", "", http.StatusNotFound)
	c.do("GET", "/v1/nodes/n1/management/indicators/led@system", "1.62", "", http.StatusNotFound)
	c.do("PUT", "/v1/nodes/n1/management/indicators/led@system", "1.62", `{"state":"ON"}`, http.StatusNotFound)

	var list struct {
		Indicators []struct {
			Name, Component string
			Readonly        bool
			States          []string
			Links           []struct{ Href, Rel string }
		}
	}
	if err := json.Unmarshal(c.do("GET", "/v1/nodes/n1/management/indicators", "1.63", "", http.StatusOK), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Indicators) != 2 || list.Indicators[0].Name != "led@chassis" || list.Indicators[1].Name != "led@system" ||
		list.Indicators[1].Component != "system" || strings.Join(list.Indicators[1].States, ",") != "OFF,ON,BLINKING" ||
		len(list.Indicators[1].Links) != 2 || !strings.HasSuffix(list.Indicators[1].Links[0].Href, "/v1/nodes/n1/management/indicators/led@system") {
		t.Fatalf("indicators: %+v", list)
	}
	if got := c.obj("GET", "/v1/nodes/n1/management/indicators/led@system", "1.63", "", http.StatusOK); got["state"] != "OFF" {
		t.Fatalf("initial state: %v", got)
	}
	c.do("PUT", "/v1/nodes/n1/management/indicators/led@system", "1.63", `{"state":"BLINKING"}`, http.StatusNoContent)
	if got := c.obj("GET", "/v1/nodes/n1/management/indicators/led@system", "latest", "", http.StatusOK); got["state"] != "BLINKING" {
		t.Fatalf("after BLINKING: %v", got)
	}
	if got := c.obj("GET", "/v1/nodes/n1/management/indicators/led@chassis", "1.63", "", http.StatusOK); got["state"] != "OFF" {
		t.Fatalf("chassis changed with system: %v", got)
	}
	for path, tc := range map[string]struct{ body, want string }{
		"led@system":  {`{"state":"UNKNOWN"}`, "Invalid indicator state UNKNOWN"},
		"led@system ": {`{}`, "Mandatory field missing"},
		"led":         {`{"state":"ON"}`, `Malformed indicator name "led"`},
		"led@drive":   {`{"state":"ON"}`, "no indicator led on component drive"},
		"led@chassis": {`{"state":"BLINKING"}`, "cannot be BLINKING"},
	} {
		p := strings.TrimSpace(path)
		if got := c.fault("PUT", "/v1/nodes/n1/management/indicators/"+p, "1.63", tc.body, http.StatusBadRequest); !strings.Contains(got, tc.want) {
			t.Errorf("PUT %s %s: %q, want %q", p, tc.body, got, tc.want)
		}
	}
	if got := c.fault("GET", "/v1/nodes/n1/management/indicators/nope", "1.63", "", http.StatusBadRequest); !strings.Contains(got, "Malformed") {
		t.Errorf("GET malformed: %q", got)
	}
	c.do("GET", "/v1/nodes/n2/management/indicators", "1.63", "", http.StatusNotFound)
}

// TestV1_89VirtualMedia: POST and DELETE /v1/nodes/{node}/vmedia (1.89)
// attach and detach through the driver in the background (204); GET
// (1.93) lists the slots as Ironic (media_types, inserted, image). Below
// their versions they are 404; Ironic's validation gives 400.
func TestV1_89VirtualMedia(t *testing.T) {
	c := newMgmt2Stack(t, nil)
	c.do("POST", "/v1/nodes", "1.89", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
	attach := `{"device_type":"cdrom","image_url":"http://images.example/boot.iso","image_download_source":"http"}`
	c.do("POST", "/v1/nodes/n1/vmedia", "1.88", attach, http.StatusNotFound)
	c.do("DELETE", "/v1/nodes/n1/vmedia", "1.88", "", http.StatusNotFound)
	c.do("GET", "/v1/nodes/n1/vmedia", "1.92", "", http.StatusNotFound)

	for body, want := range map[string]string{
		`{"device_type":"CDROM","image_url":"http://x/y.iso"}`:                                 "'CDROM' is not one of ['disk', 'cdrom', 'floppy']",
		`{"image_url":"http://x/y.iso"}`:                                                       "'device_type' is a required property",
		`{"device_type":"cdrom"}`:                                                              "'image_url' is a required property",
		`{"device_type":"cdrom","image_url":"ftp://x/y.iso"}`:                                  "Unsupported or missing URL scheme: ftp",
		`{"device_type":"cdrom","image_url":"/y.iso"}`:                                         "Unsupported or missing URL scheme: ",
		`{"device_type":"cdrom","image_url":"http://x/y.iso","image_download_source":"nfs"}`:   "'nfs' is not one of ['http', 'local', 'swift']",
		`{"device_type":"cdrom","image_url":"http://x/y.iso","username":"u"}`:                  "Unknown attribute",
		`{"device_type":"cdrom","image_url":"http://x/y.iso","image_download_source":"swift"}`: "Rivet has no object store",
		`{"device_type":"disk","image_url":"http://x/y.iso"}`:                                  "",
	} {
		if want == "" {
			continue // accepted: the fake driver has no disk slot (last_error, below)
		}
		if got := c.fault("POST", "/v1/nodes/n1/vmedia", "1.89", body, http.StatusBadRequest); !strings.Contains(got, want) {
			t.Errorf("POST %s: %q, want %q", body, got, want)
		}
	}
	if got := c.fault("DELETE", "/v1/nodes/n1/vmedia?device_types=cdrom,usb", "1.89", "", http.StatusBadRequest); got != "Invalid device type(s) usb (valid are disk, cdrom, floppy)" {
		t.Errorf("DELETE usb: %q", got)
	}

	c.do("POST", "/v1/nodes/n1/vmedia", "1.89", attach, http.StatusNoContent)
	if n := c.settle(); n["last_error"] != nil {
		t.Fatalf("attach: last_error %v", n["last_error"])
	}
	var media []map[string]any
	if err := json.Unmarshal(c.do("GET", "/v1/nodes/n1/vmedia", "1.93", "", http.StatusOK), &media); err != nil {
		t.Fatal(err)
	}
	if len(media) != 2 || media[0]["inserted"] != true || media[0]["image"] != "http://images.example/boot.iso" ||
		media[1]["inserted"] != false || len(media[0]) != 3 {
		t.Fatalf("vmedia after attach: %v", media)
	}
	c.do("DELETE", "/v1/nodes/n1/vmedia?device_types=floppy", "1.89", "", http.StatusNoContent)
	c.settle()
	_ = json.Unmarshal(c.do("GET", "/v1/nodes/n1/vmedia", "1.93", "", http.StatusOK), &media)
	if media[0]["inserted"] != true {
		t.Fatalf("detaching the floppy ejected the CD: %v", media)
	}
	c.do("DELETE", "/v1/nodes/n1/vmedia", "1.89", "", http.StatusNoContent)
	c.settle()
	_ = json.Unmarshal(c.do("GET", "/v1/nodes/n1/vmedia", "1.93", "", http.StatusOK), &media)
	if media[0]["inserted"] != false || media[0]["image"] != "" {
		t.Fatalf("after detaching all: %v", media)
	}
	// A slot the driver lacks: accepted, then last_error names it.
	c.do("POST", "/v1/nodes/n1/vmedia", "1.89", `{"device_type":"disk","image_url":"https://x/y.img"}`, http.StatusNoContent)
	if n := c.settle(); !strings.Contains(str(n["last_error"]), "no disk virtual media slot") {
		t.Fatalf("disk attach: last_error %v", n["last_error"])
	}
}

// TestV1_93GophercloudVirtualMedia: gophercloud v2's AttachVirtualMedia,
// GetVirtualMedia and DetachVirtualMedia (what Metal3 calls) work against
// the API over a real conductor; at 1.92 GetVirtualMedia is refused.
func TestV1_93GophercloudVirtualMedia(t *testing.T) {
	c := newMgmt2Stack(t, nil)
	gc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: c.url + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gc.Microversion = "1.93"
	n, err := nodes.Create(ctx, gc, nodes.CreateOpts{Name: "n1", Driver: "fake-hardware"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if err := nodes.AttachVirtualMedia(ctx, gc, n.UUID, nodes.AttachVirtualMediaOpts{DeviceType: nodes.VirtualMediaCD,
		ImageURL: "https://images.example/ipa.iso", ImageDownloadSource: nodes.ImageDownloadSourceHTTP}).ExtractErr(); err != nil {
		t.Fatalf("AttachVirtualMedia: %v", err)
	}
	c.settle()
	var got []struct {
		MediaTypes []string `json:"media_types"`
		Inserted   bool     `json:"inserted"`
		Image      string   `json:"image"`
	}
	if err := nodes.GetVirtualMedia(ctx, gc, n.UUID).ExtractInto(&got); err != nil {
		t.Fatalf("GetVirtualMedia: %v", err)
	}
	if len(got) == 0 || !got[0].Inserted || got[0].Image != "https://images.example/ipa.iso" {
		t.Fatalf("GetVirtualMedia: %+v", got)
	}
	if err := nodes.DetachVirtualMedia(ctx, gc, n.UUID, nodes.DetachVirtualMediaOpts{DeviceTypes: []nodes.VirtualMediaDeviceType{nodes.VirtualMediaCD}}).ExtractErr(); err != nil {
		t.Fatalf("DetachVirtualMedia: %v", err)
	}
	c.settle()
	if err := nodes.GetVirtualMedia(ctx, gc, n.UUID).ExtractInto(&got); err != nil || got[0].Inserted {
		t.Fatalf("after detach: %+v, %v", got, err)
	}
	gc.Microversion = "1.92"
	if err := nodes.GetVirtualMedia(ctx, gc, n.UUID).ExtractInto(&got); err == nil {
		t.Fatal("GetVirtualMedia at 1.92 succeeded")
	}
}

// TestManagement2Pinned: pinned to release 0.2 every management interface
// version 2 request is 406 (the microversion check; the RPC client is
// capped below 1.5 as well, TestManagement2Matrix).
func TestManagement2Pinned(t *testing.T) {
	old, ok := release.Default().Lookup("0.2")
	if !ok {
		t.Fatal("no release 0.2")
	}
	srv := httptest.NewServer(newStackWith(t, release.NewPinner(release.Default(), release.Pin{Mode: release.PinRelease, Release: old}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.93")))
	defer srv.Close()
	c := &mgmt2Client{t: t, url: srv.URL}
	c.do("POST", "/v1/nodes", "1.31", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
	for _, r := range []struct{ method, path, ver, body string }{
		{"PUT", "/v1/nodes/n1/states/boot_mode", "1.76", `{"target":"uefi"}`},
		{"PUT", "/v1/nodes/n1/states/secure_boot", "1.76", `{"target":true}`},
		{"GET", "/v1/nodes/n1/management/indicators", "1.63", ""},
		{"PUT", "/v1/nodes/n1/management/indicators/led@system", "1.63", `{"state":"ON"}`},
		{"POST", "/v1/nodes/n1/vmedia", "1.89", `{"device_type":"cdrom","image_url":"http://x/y.iso"}`},
		{"GET", "/v1/nodes/n1/vmedia", "1.93", ""},
	} {
		c.do(r.method, r.path, r.ver, r.body, http.StatusNotAcceptable)
	}
}

// TestManagement2OldPlugin: a fake-hardware plugin built with release
// 0.2's SDK negotiates management interface version 1; setting its boot
// mode, its indicators and its virtual media are refused with a clear 400
// naming the version and asking for an upgrade, and the plugin keeps
// serving. This tree's plugin negotiates version 2 and serves them.
func TestManagement2OldPlugin(t *testing.T) {
	old := filepath.Join(testenv.BuildRelease(t, "0.2", "./cmd/rivet-driver-fake"), "rivet-driver-fake")
	m, reg := startFakePlugin(t, old)
	if v := reg.Interfaces[plugins.InterfaceManagement]; v != 1 {
		t.Fatalf("0.2 plugin negotiated management %d, want 1", v)
	}
	c := newMgmt2Stack(t, conductor.PluginDrivers{Manager: m, Enabled: []string{fake.HardwareType}})
	c.do("POST", "/v1/nodes", "1.93", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
	const want = "(management interface version 1); upgrade the plugin"
	for _, r := range []struct{ method, path, body, what string }{
		{"PUT", "/v1/nodes/n1/states/boot_mode", `{"target":"uefi"}`, "setting the boot mode"},
		{"PUT", "/v1/nodes/n1/states/secure_boot", `{"target":false}`, "setting the secure boot state"},
		{"GET", "/v1/nodes/n1/management/indicators", "", "indicators"},
		{"PUT", "/v1/nodes/n1/management/indicators/led@system", `{"state":"ON"}`, "indicators"},
		{"POST", "/v1/nodes/n1/vmedia", `{"device_type":"cdrom","image_url":"http://x/y.iso"}`, "virtual media"},
		{"GET", "/v1/nodes/n1/vmedia", "", "virtual media"},
	} {
		got := c.fault(r.method, r.path, "1.93", r.body, http.StatusBadRequest)
		if !strings.Contains(got, "the driver's plugin does not support "+r.what+" "+want) {
			t.Errorf("%s %s: %q", r.method, r.path, got)
		}
	}
	// The old plugin still serves management version 1.
	c.do("PUT", "/v1/nodes/n1/management/boot_device", "1.93", `{"boot_device":"pxe"}`, http.StatusNoContent)
	if n := c.settle(); n["last_error"] != nil {
		t.Errorf("last_error after refusals: %v", n["last_error"])
	}
}

// TestManagement2PluginOverGRPC: this tree's fake-hardware plugin, run as
// a process, negotiates management interface version 2, and every call
// of it crosses the plugin protocol's Management2 service.
func TestManagement2PluginOverGRPC(t *testing.T) {
	m, reg := startFakePlugin(t, buildFakePlugin(t))
	if v := reg.Interfaces[plugins.InterfaceManagement]; v != 2 {
		t.Fatalf("HEAD's plugin negotiated management %d, want 2", v)
	}
	c := newMgmt2Stack(t, conductor.PluginDrivers{Manager: m, Enabled: []string{fake.HardwareType}})
	c.do("POST", "/v1/nodes", "1.93", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
	c.do("PUT", "/v1/nodes/n1/states/boot_mode", "1.93", `{"target":"bios"}`, http.StatusAccepted)
	if n := c.settle(); n["boot_mode"] != "bios" || n["last_error"] != nil {
		t.Fatalf("boot mode over gRPC: %v, last_error %v", n["boot_mode"], n["last_error"])
	}
	c.do("PUT", "/v1/nodes/n1/management/indicators/led@system", "1.93", `{"state":"ON"}`, http.StatusNoContent)
	if got := c.obj("GET", "/v1/nodes/n1/management/indicators/led@system", "1.93", "", http.StatusOK); got["state"] != "ON" {
		t.Fatalf("indicator over gRPC: %v", got)
	}
	c.do("POST", "/v1/nodes/n1/vmedia", "1.93", `{"device_type":"floppy","image_url":"nfs://server/f.img"}`, http.StatusNoContent)
	c.settle()
	var media []map[string]any
	_ = json.Unmarshal(c.do("GET", "/v1/nodes/n1/vmedia", "1.93", "", http.StatusOK), &media)
	if len(media) != 2 || media[1]["image"] != "nfs://server/f.img" {
		t.Fatalf("vmedia over gRPC: %v", media)
	}
	// A value the plugin refuses comes back as Ironic's 400, not a 500.
	if got := c.fault("PUT", "/v1/nodes/n1/management/indicators/led@chassis", "1.93", `{"state":"BLINKING"}`, http.StatusBadRequest); !strings.Contains(got, "cannot be BLINKING") {
		t.Errorf("refused state: %q", got)
	}
}

// TestIronicClientBootMode: python-ironicclient's `baremetal node boot mode
// set` and `node secure boot on/off` (API 1.76) against the API over a real
// conductor; the node shows what was set.
func TestIronicClientBootMode(t *testing.T) {
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.93"))
	cli, obj := baremetalCLI(t, h)
	cli("node", "create", "--driver", "fake-hardware", "--name", "n1")
	// show waits for the background work: the lease is gone once it is done.
	show := func() map[string]any {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			n := obj(cli("node", "show", "n1", "-f", "json"))
			if n["reservation"] == nil {
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("n1 still reserved: %v", n["reservation"])
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	cli("node", "boot", "mode", "set", "n1", "bios")
	if n := show(); n["boot_mode"] != "bios" || n["last_error"] != nil {
		t.Fatalf("after boot mode set bios: boot_mode %v, last_error %v", n["boot_mode"], n["last_error"])
	}
	cli("node", "boot", "mode", "set", "n1", "uefi")
	show()
	cli("node", "secure", "boot", "on", "n1")
	if n := show(); n["boot_mode"] != "uefi" || n["secure_boot"] != true || n["last_error"] != nil {
		t.Fatalf("after secure boot on: boot_mode %v, secure_boot %v, last_error %v", n["boot_mode"], n["secure_boot"], n["last_error"])
	}
	cli("node", "secure", "boot", "off", "n1")
	if n := show(); n["secure_boot"] != false {
		t.Fatalf("after secure boot off: %v", n["secure_boot"])
	}
}
