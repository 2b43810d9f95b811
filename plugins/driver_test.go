package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

type descOnly struct{ d Description }

func (x descOnly) Describe() Description { return x.d }

type powerOnly struct{ descOnly }

func (powerOnly) GetPowerState(context.Context, Node) (PowerState, error) { return PowerOff, nil }
func (powerOnly) SetPowerState(context.Context, Node, PowerState) error   { return nil }
func (powerOnly) Reboot(context.Context, Node) error                      { return nil }

type powerNMI struct{ powerOnly }

type powerV2 struct{ powerOnly }

func (powerV2) SetPowerStateWithin(context.Context, Node, PowerState, time.Duration) error {
	return nil
}
func (powerV2) RebootWithin(context.Context, Node, time.Duration) error { return nil }

type powerSoft struct{ powerV2 }

func (powerSoft) SoftPowerOff(context.Context, Node, time.Duration) error { return nil }
func (powerSoft) SoftReboot(context.Context, Node, time.Duration) error   { return nil }

// softOnly has the soft methods without power interface version 2.
type softOnly struct{ powerOnly }

func (softOnly) SoftPowerOff(context.Context, Node, time.Duration) error { return nil }
func (softOnly) SoftReboot(context.Context, Node, time.Duration) error   { return nil }

func (powerNMI) InjectNMI(context.Context, Node) error { return nil }

// TestDescribe checks what a plugin advertises is derived from what it
// implements, and that a capability it cannot back is refused.
func TestDescribe(t *testing.T) {
	desc := Description{Name: "x", HardwareTypes: []string{"x-hw"}}
	tests := map[string]struct {
		d         Driver
		protocols []int // nil: Protocols()
		wantIfc   string
		wantCaps  string
		wantErr   string
	}{
		"power v2":                  {d: powerV2{powerOnly{descOnly{desc}}}, wantIfc: "map[power:[1 2]]", wantCaps: "[]"},
		"power v2 and soft":         {d: powerSoft{powerV2{powerOnly{descOnly{desc}}}}, wantIfc: "map[power:[1 2]]", wantCaps: "[soft_power]"},
		"soft served at protocol 1": {d: powerSoft{powerV2{powerOnly{descOnly{desc}}}}, protocols: []int{1}, wantIfc: "map[power:[1]]", wantCaps: "[]"},
		"soft without power v2":     {d: softOnly{powerOnly{descOnly{desc}}}, wantErr: "not power interface version 2"},
		"declared soft, no method":  {d: powerV2{powerOnly{descOnly{Description{Name: "x", HardwareTypes: []string{"h"}, Capabilities: []Capability{CapabilitySoftPower}}}}}, wantErr: "lacks the methods"},
		"power only":                {d: powerOnly{descOnly{desc}}, wantIfc: "map[power:[1]]", wantCaps: "[]"},
		"nmi without management":    {d: powerNMI{powerOnly{descOnly{desc}}}, wantIfc: "map[power:[1]]", wantCaps: "[]"},
		"declared virtual media":    {d: powerOnly{descOnly{Description{Name: "x", HardwareTypes: []string{"h"}, Capabilities: []Capability{CapabilityVirtualMedia}}}}, wantIfc: "map[power:[1]]", wantCaps: "[virtual_media]"},
		"declared nmi, no method":   {d: powerOnly{descOnly{Description{Name: "x", HardwareTypes: []string{"h"}, Capabilities: []Capability{CapabilityNMI}}}}, wantErr: "lacks the methods"},
		"no interface":              {d: descOnly{desc}, wantErr: "implements no hardware interface"},
		"no name":                   {d: powerOnly{descOnly{Description{HardwareTypes: []string{"h"}}}}, wantErr: "no Name"},
		"no hardware types":         {d: powerOnly{descOnly{Description{Name: "x"}}}, wantErr: "no HardwareTypes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			protocols := tc.protocols
			if protocols == nil {
				protocols = Protocols()
			}
			info, err := Describe(tc.d, protocols)
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
