package ipmi

import (
	"errors"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// TestIPMISimConformance runs the shared conformance suite against Debian's
// ipmi_sim, an IPMI peer nobody here wrote. Its one documented deviation
// replaces the suite's "management" part by a check of what the driver
// does about it: ipmi_sim keeps only the boot device selector (persistent
// and EFI read back false and unknown) and refuses the diagnostic
// interrupt with cc 0xCC, which the driver reports as ErrNotSupported.
func TestIPMISimConformance(t *testing.T) {
	sim := startSims(t, 1, false)
	d := newDriver(t, Options{})
	n := sim.node(0, nil)
	n.InstanceInfo = map[string]any{InstanceKernel: "http://images/vmlinuz", InstanceRamdisk: "http://images/initrd"}
	deviations := map[string]func(t *testing.T){
		"management": func(t *testing.T) {
			for _, dev := range supportedDevices {
				if err := d.SetBootDevice(testCtx(t), n, plugins.BootDeviceSetting{Device: dev, Persistent: true, Mode: plugins.BootModeUEFI}); err != nil {
					t.Fatal(err)
				}
				got, err := d.GetBootDevice(testCtx(t), n)
				if err != nil || got != (plugins.BootDeviceSetting{Device: dev}) {
					t.Errorf("boot device after setting %s: %+v, %v; want the device, not persistent, mode unknown", dev, got, err)
				}
			}
			if err := d.InjectNMI(testCtx(t), n); !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(err.Error(), "0xcc") {
				t.Errorf("NMI: %v, want ErrNotSupported naming cc 0xcc", err)
			}
		},
	}
	var row []string
	for _, c := range plugintest.Cases(plugintest.Direct(t, d), n) {
		if check, ok := deviations[c.Name]; ok {
			ok := t.Run(c.Name+" (deviation)", check)
			row = append(row, c.Name+": "+cond(ok, "dev: selector only, NMI cc 0xCC", "FAIL"))
			continue
		}
		skipped := false
		ok := t.Run(c.Name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			c.Run(t)
		})
		row = append(row, c.Name+": "+cond(skipped, "n/a (not served)", cond(ok, "pass", "FAIL")))
	}
	t.Logf("ipmi_sim × conformance: %s", strings.Join(row, ", "))
}

func cond(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}
