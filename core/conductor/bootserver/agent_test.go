package bootserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/conductor/bootserver"
)

// TestAgentRamdisk: driver_info's agent ramdisk becomes the keys a deploy
// boots, with the inspection callback on the kernel command line when set.
func TestAgentRamdisk(t *testing.T) {
	for name, c := range map[string]struct {
		info     map[string]any
		callback string
		want     map[string]any
	}{
		"none":            {info: map[string]any{"ipmi_address": "10.0.0.1"}, want: nil},
		"iso":             {info: map[string]any{"deploy_iso": "http://i/ipa.iso"}, want: map[string]any{"boot_iso": "http://i/ipa.iso"}},
		"redfish iso":     {info: map[string]any{"redfish_deploy_iso": "http://i/r.iso"}, want: map[string]any{"boot_iso": "http://i/r.iso"}},
		"kernel only":     {info: map[string]any{"deploy_kernel": "http://i/k"}, want: nil},
		"kernel, ramdisk": {info: map[string]any{"deploy_kernel": "http://i/k", "deploy_ramdisk": "http://i/r"}, want: map[string]any{"kernel": "http://i/k", "ramdisk": "http://i/r"}},
		"with callback": {info: map[string]any{"deploy_kernel": "http://i/k", "deploy_ramdisk": "http://i/r"}, callback: "http://10.0.0.1:6385/",
			want: map[string]any{"kernel": "http://i/k", "ramdisk": "http://i/r",
				"kernel_append_params": "ipa-inspection-callback-url=http://10.0.0.1:6385/v1/continue_inspection ipa-api-url=http://10.0.0.1:6385"}},
	} {
		if diff := cmp.Diff(c.want, bootserver.AgentRamdisk(c.info, c.callback)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestStoreSourceInspecting: a node being inspected boots the agent
// ramdisk of its driver_info, never its instance_info image, and the
// script carries the callback.
func TestStoreSourceInspecting(t *testing.T) {
	store, n := activeNode(t)
	ctx := context.Background()
	n.ProvisionState = "inspect wait"
	n.DriverInfo = map[string]any{"deploy_kernel": "http://images.example/ipa.kernel", "deploy_ramdisk": "http://images.example/ipa.initramfs"}
	if err := store.Save(ctx, n); err != nil {
		t.Fatal(err)
	}
	src := bootserver.StoreSource{Store: store, InspectionCallback: "http://192.0.2.1:6385"}
	got, err := src.NodeByMAC(ctx, mac)
	if err != nil {
		t.Fatal(err)
	}
	s, err := bootserver.Render(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"http://images.example/ipa.kernel", "http://images.example/ipa.initramfs",
		"ipa-inspection-callback-url=http://192.0.2.1:6385/v1/continue_inspection"} {
		if !strings.Contains(s.Body, want) {
			t.Errorf("script lacks %q:\n%s", want, s.Body)
		}
	}
	if strings.Contains(s.Body, "images.example/k") || strings.Contains(s.Body, "images.example/r") || s.Kind != bootserver.BootRamdisk {
		t.Errorf("script (%s) boots the instance image:\n%s", s.Kind, s.Body)
	}
}
