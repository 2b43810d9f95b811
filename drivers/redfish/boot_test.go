package redfish_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestBootDevice sets each device once and persistently in each mode and
// reads it back from the driver and from the simulator's state.
func TestBootDevice(t *testing.T) {
	b := startSim(t, sim.Options{})
	d := newDriver(t, testOptions())
	n := node(b, "node-0")
	tests := map[string]struct {
		set  plugins.BootDeviceSetting
		want sim.BootOverride
	}{
		"pxe once uefi":         {plugins.BootDeviceSetting{Device: plugins.BootPXE, Mode: plugins.BootModeUEFI}, sim.BootOverride{Target: "Pxe", Enabled: "Once", Mode: "UEFI"}},
		"cdrom persistent bios": {plugins.BootDeviceSetting{Device: plugins.BootCDROM, Persistent: true, Mode: plugins.BootModeBIOS}, sim.BootOverride{Target: "Cd", Enabled: "Continuous", Mode: "Legacy"}},
		"disk once uefi":        {plugins.BootDeviceSetting{Device: plugins.BootDisk, Mode: plugins.BootModeUEFI}, sim.BootOverride{Target: "Hdd", Enabled: "Once", Mode: "UEFI"}},
		"bios persistent uefi":  {plugins.BootDeviceSetting{Device: plugins.BootBIOS, Persistent: true, Mode: plugins.BootModeUEFI}, sim.BootOverride{Target: "BiosSetup", Enabled: "Continuous", Mode: "UEFI"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			must(t, "set boot device", d.SetBootDevice(ctx(t), n, tc.set))
			if diff := cmp.Diff(tc.want, b.state(t, "node-0").Boot); diff != "" {
				t.Errorf("simulator boot override (-want +got):\n%s", diff)
			}
			got, err := d.GetBootDevice(ctx(t), n)
			must(t, "get boot device", err)
			if diff := cmp.Diff(tc.set, got); diff != "" {
				t.Errorf("GetBootDevice (-set +got):\n%s", diff)
			}
		})
	}
}

// TestBootOnceIsUsedUp: a one-time override is consumed by the next boot,
// after which the driver reports the firmware's own order (disk).
func TestBootOnceIsUsedUp(t *testing.T) {
	b := startSim(t, sim.Options{})
	d := newDriver(t, testOptions())
	n := node(b, "node-0")
	must(t, "set", d.SetBootDevice(ctx(t), n, plugins.BootDeviceSetting{Device: plugins.BootPXE}))
	must(t, "power on", d.SetPowerState(ctx(t), n, plugins.PowerOn))
	if st := b.state(t, "node-0"); st.LastBootSource != "Pxe" {
		t.Fatalf("booted from %q, want Pxe", st.LastBootSource)
	}
	got, err := d.GetBootDevice(ctx(t), n)
	must(t, "get", err)
	if got.Device != plugins.BootDisk || !got.Persistent {
		t.Errorf("after the boot: %+v, want disk, persistent", got)
	}
}

// TestBootDeviceStaleETag: a 412 to the PATCH (the System changed between
// read and write) is answered by reading again and patching once more.
func TestBootDeviceStaleETag(t *testing.T) {
	var refused atomic.Int32
	b := startSim(t, sim.Options{}, func(b *bmcSim) {
		b.intercept = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPatch && refused.Add(1) == 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusPreconditionFailed)
				_, _ = w.Write([]byte(`{"error":{"code":"Base.1.8.PreconditionFailed","message":"stale ETag"}}`))
				return true
			}
			return false
		}
	})
	d := newDriver(t, testOptions())
	set := plugins.BootDeviceSetting{Device: plugins.BootPXE, Persistent: true}
	must(t, "set boot device", d.SetBootDevice(ctx(t), node(b, "node-0"), set))
	if got := b.state(t, "node-0").Boot; got.Target != "Pxe" || got.Enabled != "Continuous" {
		t.Errorf("boot %+v after the retry", got)
	}
	if n := b.count(http.MethodPatch, "/Systems/node-0"); n != 2 {
		t.Errorf("%d PATCHes, want 2 (refused, then retried)", n)
	}
}

// TestSupportedBootDevices lists only what the system advertises and
// refuses the rest without sending anything.
func TestSupportedBootDevices(t *testing.T) {
	b := startSim(t, sim.Options{}, func(b *bmcSim) {
		b.rewrite = func(_ string, body map[string]any) {
			if boot, ok := body["Boot"].(map[string]any); ok {
				boot["BootSourceOverrideTarget@Redfish.AllowableValues"] = []string{"None", "Pxe", "Hdd"}
			}
		}
	})
	d := newDriver(t, testOptions())
	n := node(b, "node-0")
	got, err := d.SupportedBootDevices(ctx(t), n)
	must(t, "supported", err)
	if diff := cmp.Diff([]plugins.BootDevice{plugins.BootPXE, plugins.BootDisk}, got); diff != "" {
		t.Errorf("supported boot devices (-want +got):\n%s", diff)
	}
	err = d.SetBootDevice(ctx(t), n, plugins.BootDeviceSetting{Device: plugins.BootCDROM})
	if !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("set cdrom: %v, want ErrNotSupported", err)
	}
	if n := b.count(http.MethodPatch, "/Systems/"); n != 0 {
		t.Errorf("%d PATCHes sent for an unsupported device", n)
	}
}

// TestNMI sends Nmi only when advertised; otherwise ErrNotSupported and
// nothing sent.
func TestNMI(t *testing.T) {
	tests := map[string]struct {
		strip    bool
		wantErr  error
		wantNMIs int
	}{
		"advertised":     {false, nil, 1},
		"not advertised": {true, plugins.ErrNotSupported, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, sim.Options{}, func(b *bmcSim) {
				if tc.strip {
					b.rewrite = stripResetTypes("Nmi")
				}
			})
			if err := b.SetPower("node-0", true); err != nil {
				t.Fatal(err)
			}
			d := newDriver(t, testOptions())
			err := d.InjectNMI(ctx(t), node(b, "node-0"))
			noSecret(t, err)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("InjectNMI: %v, want %v", err, tc.wantErr)
			}
			if got := b.state(t, "node-0").NMIs; got != tc.wantNMIs {
				t.Errorf("%d NMIs, want %d", got, tc.wantNMIs)
			}
		})
	}
}
