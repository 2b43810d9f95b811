package conductor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

// validatingHW is the hooked fake with a Validate hook and declared
// properties, as a driver of this SDK is; the hooked fake alone is what a
// plugin of an older SDK looks like.
type validatingHW struct {
	*hookedFake
	mu     sync.Mutex
	calls  map[plugins.Interface]int
	answer func(n plugins.Node, iface plugins.Interface) error
}

func (v *validatingHW) Validate(_ context.Context, n plugins.Node, iface plugins.Interface) error {
	v.mu.Lock()
	v.calls[iface]++
	answer := v.answer
	v.mu.Unlock()
	if answer == nil {
		return nil
	}
	return answer(n, iface)
}

func (v *validatingHW) Properties(context.Context) ([]plugins.Property, error) {
	return []plugins.Property{{Name: "ipmi_address", Required: true, Description: "BMC address"},
		{Name: "ipmi_port", Description: "RMCP port."}}, nil
}

func (v *validatingHW) callsTo(iface plugins.Interface) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls[iface]
}

func validateHarness(t *testing.T) (*harness, *validatingHW) {
	var v *validatingHW
	h := startHarness(t, nil, "cond-a", nil, func(hw *hookedFake) StaticDrivers {
		v = &validatingHW{hookedFake: hw, calls: map[plugins.Interface]int{}}
		return StaticDrivers{fake.HardwareType: hw, "ipmi": v, "redfish": hw}
	})
	return h, v
}

func (h *harness) enrollWith(driver string, di, ii map[string]any) *objects.Node {
	h.t.Helper()
	n, err := h.api.CreateNode(context.Background(), &objects.Node{Driver: driver, DriverInfo: di, InstanceInfo: ii})
	if err != nil {
		h.t.Fatalf("create %s node: %v", driver, err)
	}
	return n
}

func (h *harness) validate(n *objects.Node) map[string]rpc.InterfaceValidation {
	h.t.Helper()
	out, err := h.api.ValidateDriverInterfaces(context.Background(), n)
	if err != nil {
		h.t.Fatalf("validate: %v", err)
	}
	return out
}

// TestValidateAsksTheDriver: validate reports what the driver's Validate
// says, per interface, leading with the kind of problem and with secrets
// masked; on 9b9faca it checked only that ipmi_address was present.
func TestValidateAsksTheDriver(t *testing.T) {
	h, v := validateHarness(t)
	const pw = "Hunter2-very-secret"
	v.answer = func(n plugins.Node, iface plugins.Interface) error {
		switch iface {
		case plugins.InterfacePower:
			return fmt.Errorf("ipmi 10.0.0.9:623: user admin with password %s: %w", pw, plugins.ErrCredentialsRefused)
		case plugins.InterfaceManagement:
			return fmt.Errorf("no answer: %w", plugins.ErrBMCUnreachable)
		case plugins.InterfaceInspect:
			return fmt.Errorf("system 7: %w", plugins.ErrWrongSystemID)
		case plugins.InterfaceDeploy:
			return &plugins.InvalidDriverInfoError{Missing: []string{"deploy_kernel"}}
		}
		return nil
	}
	n := h.enrollWith("ipmi", map[string]any{"ipmi_address": "10.0.0.9", "ipmi_password": pw}, nil)
	got := h.validate(n)
	want := map[string]string{
		"power":      "BMC refused the credentials",
		"management": "BMC unreachable",
		"inspect":    "wrong system id",
		"deploy":     "Some parameters were missing in node's driver_info: deploy_kernel",
		"boot":       "Some parameters were missing in node's driver_info: deploy_kernel",
	}
	for iface, prefix := range want {
		r := got[iface]
		if r.Result || r.Reason == nil || !strings.HasPrefix(*r.Reason, prefix) {
			t.Errorf("%s: %+v (%s), want false starting %q", iface, r, deref(r.Reason), prefix)
		}
		if r.Reason != nil && strings.Contains(*r.Reason, pw) {
			t.Errorf("%s: reason leaks the password: %s", iface, *r.Reason)
		}
	}
}

// TestValidateIsCachedBriefly: a storm of validate calls on one node
// reaches the driver once per interface; changing driver_info validates
// again at once.
func TestValidateIsCachedBriefly(t *testing.T) {
	h, v := validateHarness(t)
	n := h.enrollWith("ipmi", map[string]any{"ipmi_address": "10.0.0.9"}, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); h.validate(n) }()
	}
	wg.Wait()
	if got := v.callsTo(plugins.InterfacePower); got != 1 {
		t.Fatalf("8 validate calls reached the driver's power Validate %d times, want 1", got)
	}
	cur := h.node(n.UUID)
	cur.DriverInfo = map[string]any{"ipmi_address": "10.0.0.10"}
	if _, err := h.api.UpdateNode(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	h.validate(h.node(n.UUID))
	if got := v.callsTo(plugins.InterfacePower); got != 2 {
		t.Fatalf("after a driver_info change: %d power validations, want 2", got)
	}
}

// TestValidateOldDriverFallsBack: a driver without Validate (a plugin of an
// older SDK) gets the conductor's checks, as before: required keys, and
// now image references too.
func TestValidateOldDriverFallsBack(t *testing.T) {
	h, _ := validateHarness(t)
	for name, tc := range map[string]struct {
		di, ii     map[string]any
		iface      string
		ok         bool
		reasonPart string
	}{
		"address present": {map[string]any{"redfish_address": "https://bmc"}, nil, "power", true, ""},
		"address missing": {map[string]any{}, nil, "power", false, "missing in node's driver_info: redfish_address"},
		"boot_iso URL":    {map[string]any{"redfish_address": "https://bmc"}, map[string]any{"boot_iso": "http://img/x.iso"}, "deploy", true, ""},
		"boot_iso not URL": {map[string]any{"redfish_address": "https://bmc"}, map[string]any{"boot_iso": "x.iso"}, "deploy", false,
			"instance_info boot_iso is not a valid image reference"},
		"image_source not URL": {map[string]any{"redfish_address": "https://bmc"}, map[string]any{"boot_iso": "http://img/x.iso", "image_source": "disk.qcow2"}, "boot", false,
			"instance_info image_source is not a valid image reference"},
		"deploy_kernel not URL": {map[string]any{"redfish_address": "https://bmc", "deploy_kernel": "vmlinuz"}, map[string]any{"boot_iso": "http://img/x.iso"}, "deploy", false,
			"driver_info deploy_kernel is not a valid image reference"},
	} {
		t.Run(name, func(t *testing.T) {
			n := h.enrollWith("redfish", tc.di, tc.ii)
			r := h.validate(n)[tc.iface]
			if r.Result != tc.ok || (!tc.ok && !strings.Contains(deref(r.Reason), tc.reasonPart)) {
				t.Fatalf("%s: %v %q, want %v containing %q", tc.iface, r.Result, deref(r.Reason), tc.ok, tc.reasonPart)
			}
		})
	}
}

// TestDriverPropertiesDeclared: get_driver_properties serves what a driver
// declares (ending "Required."/"Optional." as Ironic's do), and the
// built-in table for a driver that declares nothing.
func TestDriverPropertiesDeclared(t *testing.T) {
	h, _ := validateHarness(t)
	ctx := context.Background()
	got, err := h.api.GetDriverProperties(ctx, "ipmi")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ipmi_address": "BMC address. Required.", "ipmi_port": "RMCP port. Optional."}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("declared: %v, want %v", got, want)
	}
	got, err = h.api.GetDriverProperties(ctx, "redfish")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["redfish_address"]; !ok || len(got) != len(driverProperties["redfish"]) {
		t.Errorf("fallback: %v, want the built-in table", got)
	}
}
