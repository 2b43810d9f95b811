package catalog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
)

var fakeHW = Served{HardwareType: "fake-hardware", Interfaces: []string{Power, Management, Deploy, Inspect}}

func TestForConductor(t *testing.T) {
	tests := map[string]struct {
		served Served
		opts   Options
		want   map[string]Impls
	}{
		"fake-hardware": {served: fakeHW, want: map[string]Impls{
			Boot: {[]string{"fake"}, "fake"}, Console: {[]string{"no-console"}, "no-console"},
			Deploy: {[]string{"direct", "fake"}, "fake"}, Inspect: {[]string{"agent", "fake", "no-inspect"}, "fake"},
			Management: {[]string{"fake"}, "fake"}, Network: {[]string{"noop"}, "noop"}, Power: {[]string{"fake"}, "fake"},
			RAID: {[]string{"no-raid"}, "no-raid"}, Vendor: {[]string{"no-vendor"}, "no-vendor"}}},
		"ipmi with a boot server, no inspection": {
			served: Served{HardwareType: "ipmi", Interfaces: []string{Power, Management, Deploy}}, opts: Options{BootServer: true},
			want: map[string]Impls{
				Boot: {[]string{"ipxe"}, "ipxe"}, Console: {[]string{"no-console"}, "no-console"},
				Deploy: {[]string{"direct", "ramdisk"}, "ramdisk"}, Inspect: {[]string{"agent", "no-inspect"}, "no-inspect"},
				Management: {[]string{"ipmitool"}, "ipmitool"}, Network: {[]string{"noop"}, "noop"},
				Power: {[]string{"ipmitool"}, "ipmitool"}, RAID: {[]string{"no-raid"}, "no-raid"}, Vendor: {[]string{"no-vendor"}, "no-vendor"}}},
		"ipmi serving the console interface": {
			served: Served{HardwareType: "ipmi", Interfaces: []string{Power, Management, Deploy, Console}},
			want: map[string]Impls{
				Boot: {[]string{"pxe"}, "pxe"}, Console: {[]string{"ipmi-socat", "no-console"}, "no-console"},
				Deploy: {[]string{"direct", "ramdisk"}, "ramdisk"}, Inspect: {[]string{"agent", "no-inspect"}, "no-inspect"},
				Management: {[]string{"ipmitool"}, "ipmitool"}, Network: {[]string{"noop"}, "noop"},
				Power: {[]string{"ipmitool"}, "ipmitool"}, RAID: {[]string{"no-raid"}, "no-raid"}, Vendor: {[]string{"no-vendor"}, "no-vendor"}}},
		"a third-party plugin with a console, without deploy": {
			served: Served{HardwareType: "acme", Interfaces: []string{Power, Console}},
			want: map[string]Impls{
				Boot: {}, Console: {[]string{"acme", "no-console"}, "no-console"}, Deploy: {}, Inspect: {[]string{"no-inspect"}, "no-inspect"},
				Management: {}, Network: {[]string{"noop"}, "noop"}, Power: {[]string{"acme"}, "acme"},
				RAID: {[]string{"no-raid"}, "no-raid"}, Vendor: {[]string{"no-vendor"}, "no-vendor"}}},
		"a third-party plugin without deploy": {
			served: Served{HardwareType: "acme", Interfaces: []string{Power}},
			want: map[string]Impls{
				Boot: {}, Console: {[]string{"no-console"}, "no-console"}, Deploy: {}, Inspect: {[]string{"no-inspect"}, "no-inspect"},
				Management: {}, Network: {[]string{"noop"}, "noop"}, Power: {[]string{"acme"}, "acme"},
				RAID: {[]string{"no-raid"}, "no-raid"}, Vendor: {[]string{"no-vendor"}, "no-vendor"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// Every hardware type offers the no-op storage and the no-*
			// rescue, bios and firmware interfaces.
			tc.want[Storage] = Impls{[]string{"noop"}, "noop"}
			tc.want[Rescue] = Impls{[]string{"no-rescue"}, "no-rescue"}
			tc.want[BIOS] = Impls{[]string{"no-bios"}, "no-bios"}
			tc.want[Firmware] = Impls{[]string{"no-firmware"}, "no-firmware"}
			c := ForConductor([]Served{tc.served}, tc.opts)
			got := map[string]Impls{}
			for _, iface := range Types() {
				got[iface] = c.Impls(tc.served.HardwareType, iface)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("catalog (-want +got):\n%s", diff)
			}
		})
	}
}

// New merges several conductors' offers: the union of what is enabled,
// the default most of them mark; Offers and FromRows round-trip.
func TestMergeAndRows(t *testing.T) {
	a := ForConductor([]Served{{HardwareType: "ipmi", Interfaces: []string{Power, Management, Deploy}}}, Options{BootServer: true})
	b := ForConductor([]Served{{HardwareType: "ipmi", Interfaces: []string{Power, Management, Deploy}}}, Options{})
	c := ForConductor([]Served{{HardwareType: "ipmi", Interfaces: []string{Power, Management, Deploy}}}, Options{})
	merged := New(append(append(a.Offers(), b.Offers()...), c.Offers()...))
	if diff := cmp.Diff(Impls{Enabled: []string{"ipxe", "pxe"}, Default: "pxe"}, merged.Impls("ipmi", Boot)); diff != "" {
		t.Errorf("boot (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(merged.Offers(), FromRows(Rows(merged)).Offers()); diff != "" {
		t.Errorf("rows round trip (-want +got):\n%s", diff)
	}
	if first := merged.Offers()[0]; first.Interface != Boot {
		t.Errorf("offers start with %+v; want Types order", first)
	}

	over := Known().Overlay(New([]Offer{{HardwareType: "ipmi", Interface: Boot, Name: "ipxe", Default: true}}))
	if got := over.Impls("ipmi", Boot).Default; got != "ipxe" {
		t.Errorf("overlay boot = %q", got)
	}
	if got := over.Impls("ipmi", Power).Default; got != "ipmitool" {
		t.Errorf("overlay kept power = %q", got)
	}
	if !over.Has("redfish") || over.Has("acme") {
		t.Errorf("overlay hardware types = %v", over.HardwareTypes())
	}
}

func TestCheckAndResolve(t *testing.T) {
	c := ForConductor([]Served{fakeHW, {HardwareType: "ipmi", Interfaces: []string{Power, Management, Deploy}}}, Options{})
	ptr := func(s string) *string { return &s }

	n := &objects.Node{Driver: "fake-hardware", InspectInterface: ptr("no-inspect")}
	filled, err := c.Check(n)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"boot_interface", "console_interface", "deploy_interface", "management_interface",
		"network_interface", "power_interface", "raid_interface", "vendor_interface",
		"storage_interface", "rescue_interface", "bios_interface", "firmware_interface"}
	if diff := cmp.Diff(want, filled); diff != "" || *n.InspectInterface != "no-inspect" || *n.DeployInterface != "fake" {
		t.Errorf("filled (-want +got):\n%s", diff)
	}
	if impl, err := c.Resolve(&objects.Node{Driver: "ipmi"}, Boot); err != nil || impl != "pxe" {
		t.Errorf("resolve unset boot = %q, %v", impl, err)
	}

	var nf *NotFoundError
	bad := &objects.Node{Driver: "fake-hardware", DeployInterface: ptr("iscsi"), PowerInterface: ptr("fake")}
	if _, err := c.Check(bad); !errors.As(err, &nf) ||
		err.Error() != "Could not find the following interface in the 'ironic.hardware.interfaces.deploy' entrypoint: iscsi. Valid interfaces are ['direct', 'fake', 'ramdisk']." {
		t.Errorf("unknown implementation: %v", err)
	}
	if bad.BootInterface != nil {
		t.Errorf("a failed Check filled boot_interface")
	}
	var inc *IncompatibleError
	_, err = c.Resolve(&objects.Node{Driver: "ipmi", PowerInterface: ptr("fake")}, Power)
	if !errors.As(err, &inc) || err.Error() != "power interface implementation 'fake' is not supported by hardware type ipmi." {
		t.Errorf("another hardware type's implementation: %v", err)
	}
	if !Unsupported(NoInspect) || Unsupported(NoopNetwork) || Unsupported("fake") {
		t.Error("Unsupported")
	}
}

func TestCache(t *testing.T) {
	now := time.Unix(0, 0)
	loads := 0
	cache := &Cache{TTL: time.Minute, Now: func() time.Time { return now }, Load: func(context.Context) (*Catalog, error) {
		loads++
		if loads == 2 {
			return nil, errors.New("db down")
		}
		return Known(), nil
	}}
	ctx := context.Background()
	for range 3 {
		if _, err := cache.Get(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if loads != 1 {
		t.Fatalf("loads within the TTL = %d, want 1", loads)
	}
	now = now.Add(time.Minute)
	if _, err := cache.Get(ctx); err == nil {
		t.Fatal("a failed load was hidden")
	}
	if _, err := cache.Get(ctx); err != nil || loads != 3 {
		t.Fatalf("after a failed load: %v, %d loads", err, loads)
	}
}

// TestBIOSAndFirmwareOffers: a plugin that negotiated bios and firmware
// offers its implementation (the default, as Ironic's hardware types list
// theirs before no-bios) beside no-bios/no-firmware; one that did not (ipmi,
// an older plugin) offers only no-bios/no-firmware, so naming another is
// the catalog's NotFoundError (the API's 400).
func TestBIOSAndFirmwareOffers(t *testing.T) {
	c := ForConductor([]Served{
		{HardwareType: "redfish", Interfaces: []string{Power, Management, Deploy, Inspect, BIOS, Firmware}},
		{HardwareType: "fake-hardware", Interfaces: []string{Power, Management, Deploy, BIOS, Firmware}},
		{HardwareType: "ipmi", Interfaces: []string{Power, Management, Deploy}},
	}, Options{})
	for hw, want := range map[string]string{"redfish": "redfish", "fake-hardware": "fake", "ipmi": ""} {
		for iface, none := range map[string]string{BIOS: NoBIOS, Firmware: NoFirmware} {
			im := c.Impls(hw, iface)
			wantImpls := Impls{Enabled: []string{none}, Default: none}
			if want != "" {
				wantImpls = Impls{Enabled: []string{want, none}, Default: want}
				if want > none {
					wantImpls.Enabled = []string{none, want}
				}
			}
			if d := cmp.Diff(wantImpls, im); d != "" {
				t.Errorf("%s %s (-want +got):\n%s", hw, iface, d)
			}
		}
	}
}

// [conductor] default_deploy_interface = direct makes direct the default
// deploy of every hardware type that deploys but fake-hardware (Ironic's
// default, which Metal3 relies on); ramdisk stays offered.
func TestForConductorDefaultDeployDirect(t *testing.T) {
	redfish := Served{HardwareType: "redfish", Interfaces: []string{Power, Management, Deploy, Inspect}}
	c := ForConductor([]Served{redfish, fakeHW}, Options{DefaultDeploy: Direct})
	if diff := cmp.Diff(Impls{Enabled: []string{"direct", "ramdisk"}, Default: "direct"}, c.Impls("redfish", Deploy)); diff != "" {
		t.Errorf("redfish deploy (-want +got):\n%s", diff)
	}
	if got := c.Impls("fake-hardware", Deploy).Default; got != "fake" {
		t.Errorf("fake-hardware deploy default %q, want fake", got)
	}
	for _, o := range []Options{{}, {DefaultDeploy: Ramdisk}} {
		if got := ForConductor([]Served{redfish}, o).Impls("redfish", Deploy).Default; got != "ramdisk" {
			t.Errorf("%+v: redfish deploy default %q, want ramdisk", o, got)
		}
	}
}
