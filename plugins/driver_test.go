package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

type descOnly struct{ d Description }

func (x descOnly) Describe() Description { return x.d }

type powerOnly struct{ descOnly }

func (powerOnly) GetPowerState(context.Context, Node) (PowerState, error) { return PowerOff, nil }
func (powerOnly) SetPowerState(context.Context, Node, PowerState) error   { return nil }
func (powerOnly) Reboot(context.Context, Node) error                      { return nil }

type powerNMI struct{ powerOnly }

func (powerNMI) InjectNMI(context.Context, Node) error { return nil }

// TestDescribe checks what a plugin advertises is derived from what it
// implements, and that a capability it cannot back is refused.
func TestDescribe(t *testing.T) {
	desc := Description{Name: "x", HardwareTypes: []string{"x-hw"}}
	tests := map[string]struct {
		d        Driver
		wantIfc  string
		wantCaps string
		wantErr  string
	}{
		"power only":              {d: powerOnly{descOnly{desc}}, wantIfc: "map[power:[1]]", wantCaps: "[]"},
		"nmi without management":  {d: powerNMI{powerOnly{descOnly{desc}}}, wantIfc: "map[power:[1]]", wantCaps: "[]"},
		"declared virtual media":  {d: powerOnly{descOnly{Description{Name: "x", HardwareTypes: []string{"h"}, Capabilities: []Capability{CapabilityVirtualMedia}}}}, wantIfc: "map[power:[1]]", wantCaps: "[virtual_media]"},
		"declared nmi, no method": {d: powerOnly{descOnly{Description{Name: "x", HardwareTypes: []string{"h"}, Capabilities: []Capability{CapabilityNMI}}}}, wantErr: "lacks the methods"},
		"no interface":            {d: descOnly{desc}, wantErr: "implements no hardware interface"},
		"no name":                 {d: powerOnly{descOnly{Description{HardwareTypes: []string{"h"}}}}, wantErr: "no Name"},
		"no hardware types":       {d: powerOnly{descOnly{Description{Name: "x"}}}, wantErr: "no HardwareTypes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			info, err := Describe(tc.d, []int{ProtocolVersion})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(info.Interfaces); got != tc.wantIfc {
				t.Errorf("interfaces %s, want %s", got, tc.wantIfc)
			}
			if got := fmt.Sprint(info.Capabilities); got != tc.wantCaps {
				t.Errorf("capabilities %s, want %s", got, tc.wantCaps)
			}
		})
	}
}
