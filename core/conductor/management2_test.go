package conductor

import (
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/plugins"
)

// TestRecordBootMode: what was read or set lands in driver_internal_info
// (a fresh map: the old one is never changed), an unknown mode removes the
// key, and nothing changed reports false.
func TestRecordBootMode(t *testing.T) {
	old := map[string]any{"other": 1}
	n := &objects.Node{DriverInternalInfo: old}
	uefi, on := plugins.BootModeUEFI, true
	if !recordBootMode(n, &uefi, &on) || n.DriverInternalInfo["boot_mode"] != "uefi" || n.DriverInternalInfo["secure_boot"] != true ||
		n.DriverInternalInfo["other"] != 1 {
		t.Fatalf("recorded: %v", n.DriverInternalInfo)
	}
	if len(old) != 1 {
		t.Errorf("the old map changed: %v", old)
	}
	if recordBootMode(n, &uefi, &on) {
		t.Error("recording the same values reported a change")
	}
	unknown := plugins.BootModeUnknown
	if !recordBootMode(n, &unknown, nil) || n.DriverInternalInfo["boot_mode"] != nil || n.DriverInternalInfo["secure_boot"] != true {
		t.Errorf("unknown mode: %v", n.DriverInternalInfo)
	}
	if BootModeOf(&objects.Node{DriverInternalInfo: map[string]any{"boot_mode": "efi"}}) != plugins.BootModeUnknown {
		t.Error("an invalid recorded mode was used")
	}
}

// TestInstanceInfoWithBootMode: the driver's instance_info gets the
// recorded boot mode unless the user set one; the node's map is never
// changed.
func TestInstanceInfoWithBootMode(t *testing.T) {
	ii := map[string]any{"image_source": "http://x"}
	n := &objects.Node{InstanceInfo: ii, DriverInternalInfo: map[string]any{"boot_mode": "bios"}}
	if got := pluginNode(n).InstanceInfo; got["boot_mode"] != "bios" || got["image_source"] != "http://x" {
		t.Errorf("recorded mode not passed: %v", got)
	}
	if _, set := ii["boot_mode"]; set {
		t.Error("the node's instance_info changed")
	}
	n.InstanceInfo = map[string]any{"boot_mode": "uefi"}
	if got := pluginNode(n).InstanceInfo; got["boot_mode"] != "uefi" {
		t.Errorf("the user's boot_mode was overridden: %v", got)
	}
	n.DriverInternalInfo = nil
	n.InstanceInfo = nil
	if got := pluginNode(n).InstanceInfo; got != nil {
		t.Errorf("no recorded mode: %v", got)
	}
}
