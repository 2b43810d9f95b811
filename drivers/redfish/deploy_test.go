package redfish_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestVirtualMediaDeploy runs prepare, deploy and tear down (twice) on each
// media layout and profile, starting with stale media in the CD slot, and
// checks the simulator: the node booted the ISO from Cd, the slot was
// emptied first, and tear down left it off with no media.
func TestVirtualMediaDeploy(t *testing.T) {
	tests := map[string]struct {
		opts     sim.Options
		extra    []any
		vendor   string // served as the service root's Vendor
		wantPath string // where the driver must have inserted
		patch    bool   // inserted by PATCH rather than the action
	}{
		"media on the manager":             {opts: sim.Options{}, wantPath: "/Managers/BMC-node-0/VirtualMedia/Cd"},
		"media on the system":              {opts: sim.Options{SystemVirtualMedia: true}, wantPath: "/Systems/node-0/VirtualMedia/Cd"},
		"driver_info picks the manager":    {opts: sim.Options{SystemVirtualMedia: true}, extra: []any{redfish.KeyVirtualMediaLocation, redfish.MediaManager}, wantPath: "/Managers/BMC-node-0/VirtualMedia/Cd"},
		"lenovo profile patches the slot":  {opts: sim.Options{}, vendor: "Lenovo", wantPath: "/Managers/BMC-node-0/VirtualMedia/Cd", patch: true},
		"hpe profile prefers the manager":  {opts: sim.Options{SystemVirtualMedia: true}, vendor: "HPE", wantPath: "/Managers/BMC-node-0/VirtualMedia/Cd"},
		"dell profile prefers the system":  {opts: sim.Options{SystemVirtualMedia: true}, vendor: "Dell Inc.", wantPath: "/Systems/node-0/VirtualMedia/Cd"},
		"settling power with system media": {opts: sim.Options{SystemVirtualMedia: true, PowerSettle: 50 * time.Millisecond}, wantPath: "/Systems/node-0/VirtualMedia/Cd"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, tc.opts, func(b *bmcSim) {
				if tc.vendor != "" {
					b.rewrite = func(path string, body map[string]any) {
						if path == "/redfish/v1/" || path == "/redfish/v1" {
							body["Vendor"] = tc.vendor
						}
					}
				}
			})
			b.raw(t, "POST", "/redfish/v1/Managers/BMC-node-0/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia",
				map[string]any{"Image": "http://old.example.test/stale.iso"}, nil)
			d := newDriver(t, testOptions())
			n := node(b, "node-0", tc.extra...)

			insertsBefore := b.count(http.MethodPost, tc.wantPath+"/Actions/VirtualMedia.InsertMedia")
			must(t, "prepare deploy", d.PrepareDeploy(ctx(t), n))
			must(t, "deploy", d.Deploy(ctx(t), n))
			st := b.state(t, "node-0")
			if st.PowerState != sim.PowerOn || st.LastBootSource != "Cd" || st.LastBootImage != iso {
				t.Fatalf("after deploy: power %s, booted %q from %q; want On, %q from Cd", st.PowerState, st.LastBootImage, st.LastBootSource, iso)
			}
			inserts := b.count(http.MethodPost, tc.wantPath+"/Actions/VirtualMedia.InsertMedia") - insertsBefore
			patches := b.count(http.MethodPatch, tc.wantPath)
			if (tc.patch && (patches == 0 || inserts != 0)) || (!tc.patch && inserts != 1) {
				t.Errorf("at %s: %d InsertMedia actions and %d PATCHes (want patch=%v)", tc.wantPath, inserts, patches, tc.patch)
			}

			for i := range 2 { // tear down is idempotent
				must(t, "tear down", d.TearDown(ctx(t), n))
				st = b.state(t, "node-0")
				if st.PowerState != sim.PowerOff {
					t.Errorf("tear down %d: power %s", i, st.PowerState)
				}
				for _, m := range st.Media {
					if m.Inserted || m.Image != "" {
						t.Errorf("tear down %d: slot %s still holds %q", i, m.Slot, m.Image)
					}
				}
			}
		})
	}
}

// TestDeployRunningNode restarts a node that is already on.
func TestDeployRunningNode(t *testing.T) {
	b := startSim(t, sim.Options{})
	if err := b.SetPower("node-0", true); err != nil {
		t.Fatal(err)
	}
	before := b.state(t, "node-0").Boots
	d := newDriver(t, testOptions())
	must(t, "deploy", d.Deploy(ctx(t), node(b, "node-0")))
	st := b.state(t, "node-0")
	if st.Boots != before+1 || st.LastBootImage != iso {
		t.Errorf("boots %d→%d, last image %q", before, st.Boots, st.LastBootImage)
	}
}

// TestPrepareDeployRefuses bad instance_info before touching the node.
func TestPrepareDeployRefuses(t *testing.T) {
	tests := map[string]struct {
		image  any
		vendor string
	}{
		"no boot_iso":                  {nil, ""},
		"not a URL":                    {"deploy.iso", ""},
		"ftp":                          {"ftp://images.example.test/deploy.iso", ""},
		"query string on a supermicro": {"http://images.example.test/deploy.iso?temp_url_sig=x", "Supermicro"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, sim.Options{}, func(b *bmcSim) {
				b.rewrite = func(path string, body map[string]any) {
					if tc.vendor != "" && (path == "/redfish/v1/" || path == "/redfish/v1") {
						body["Vendor"] = tc.vendor
					}
				}
			})
			d := newDriver(t, testOptions())
			n := node(b, "node-0")
			n.InstanceInfo = map[string]any{redfish.KeyBootISO: tc.image}
			err := d.PrepareDeploy(ctx(t), n)
			if !errors.Is(err, redfish.ErrInvalidInstanceInfo) || plugins.IsRetryable(err) {
				t.Errorf("PrepareDeploy: %v, want ErrInvalidInstanceInfo, not retryable", err)
			}
			if b.count(http.MethodPost, "InsertMedia")+b.count(http.MethodPatch, "/") != 0 {
				t.Error("PrepareDeploy changed the node")
			}
		})
	}
}
