package rpc

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/hashring"
)

// TestNoValidHostNamesEnabledHardwareTypes: "No valid host was found" says
// which hardware types the group's live conductors serve and which option
// enables one, so a driver author whose new type is missing learns why.
// On 9b9faca it named only the driver and the group.
func TestNoValidHostNamesEnabledHardwareTypes(t *testing.T) {
	var calls atomic.Int32
	cs := []ConductorInfo{
		{Hostname: "c1", Group: "Rack-A", HardwareTypes: []string{"redfish", "ipmi"}},
		{Hostname: "c2", Group: "", HardwareTypes: []string{"fake-hardware"}},
	}
	r := NewRouter(staticLister(&calls, cs), hashring.DefaultPartitionExponent, time.Hour)
	for name, tc := range map[string]struct {
		target Target
		want   string
	}{
		"other group": {Target{UUID: "u", Driver: "acme", Group: "rack-a"}, "Hardware types enabled on the live conductors of that group: ipmi, redfish."},
		"default":     {Target{UUID: "u", Driver: "acme"}, "Hardware types enabled on the live conductors of that group: fake-hardware."},
		"empty group": {Target{UUID: "u", Driver: "acme", Group: "nowhere"}, "Hardware types enabled on the live conductors of that group: none."},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.HostFor(context.Background(), tc.target)
			var nv *NoValidHost
			if !errors.As(err, &nv) {
				t.Fatalf("err = %v, want NoValidHost", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, `No valid host was found. Reason: No conductor service registered which supports driver acme for conductor group "`) ||
				!strings.Contains(msg, tc.want) || !strings.Contains(msg, "[conductor] enabled_hardware_types") {
				t.Fatalf("message %q, want Ironic's sentence, then %q and the option", msg, tc.want)
			}
		})
	}
}

// TestNoValidHostSuggestsTheClosestHardwareType is issue 31's misspelt
// driver: the answer suggests the enabled hardware type within a small edit
// distance, and none when nothing is close.
func TestNoValidHostSuggestsTheClosestHardwareType(t *testing.T) {
	var calls atomic.Int32
	cs := []ConductorInfo{{Hostname: "c1", HardwareTypes: []string{"redfish", "ipmi", "fake-hardware"}}}
	r := NewRouter(staticLister(&calls, cs), hashring.DefaultPartitionExponent, time.Hour)
	for driver, want := range map[string]string{
		"redfsh": `No valid host was found. Reason: No conductor service registered which supports driver redfsh for conductor group "". ` +
			`Did you mean "redfish"? Hardware types enabled on the live conductors of that group: fake-hardware, ipmi, redfish. ` +
			`A hardware type is served only when it is listed in [conductor] enabled_hardware_types and a driver plugin serving it is running.`,
		"fake": `No valid host was found. Reason: No conductor service registered which supports driver fake for conductor group "". ` +
			`Hardware types enabled on the live conductors of that group: fake-hardware, ipmi, redfish. ` +
			`A hardware type is served only when it is listed in [conductor] enabled_hardware_types and a driver plugin serving it is running.`,
	} {
		_, err := r.HostFor(context.Background(), Target{UUID: "u", Driver: driver})
		if err == nil || err.Error() != want {
			t.Errorf("driver %s:\n got %v\nwant %s", driver, err, want)
		}
	}
}
