package conductor

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/objects"
)

func hookTask(props map[string]any) *Task {
	return &Task{Node: &objects.Node{UUID: "11111111-2222-3333-4444-555555555555", Properties: props}, log: slog.Default()}
}

// TestUpdatedCapabilities: Ironic's get_updated_capabilities keeps the
// existing order and replaces a key in place.
func TestUpdatedCapabilities(t *testing.T) {
	for _, c := range []struct {
		old  any
		want string
	}{
		{nil, "boot_mode:uefi"},
		{"", "boot_mode:uefi"},
		{"foo:bar", "foo:bar,boot_mode:uefi"},
		{"boot_mode:bios,foo:bar", "boot_mode:uefi,foo:bar"},
		{map[string]any{"z": "1", "a": "2"}, "a:2,z:1,boot_mode:uefi"},
	} {
		if got := updatedCapabilities(c.old, map[string]string{"boot_mode": "uefi"}); got != c.want {
			t.Errorf("updatedCapabilities(%v) = %q, want %q", c.old, got, c.want)
		}
	}
}

// TestPXEMAC: pxe_interface as a MAC or in BOOTIF form.
func TestPXEMAC(t *testing.T) {
	for in, want := range map[string]string{
		"52:54:00:AA:BB:CC": "52:54:00:aa:bb:cc", "01-52-54-00-aa-bb-cc": "52:54:00:aa:bb:cc", "": "", "junk": "",
	} {
		if got := pxeMAC(map[string]any{"boot": map[string]any{"pxe_interface": in}}); got != want {
			t.Errorf("pxeMAC(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRootDeviceHook: hints choose the disk (size in GiB with operators,
// names with or without /dev/, strings case-insensitively); no disk
// matching fails as Ironic; without hints the agent's root_disk counts;
// local_gb is GiB less one, 0 without a root disk.
func TestRootDeviceHook(t *testing.T) {
	disks := []any{
		map[string]any{"name": "/dev/sda", "size": float64(500 << 30), "model": "Big", "rotational": true},
		map[string]any{"name": "/dev/nvme0n1", "size": float64(100 << 30), "model": "Fast", "rotational": false},
	}
	inv := map[string]any{"disks": disks}
	for name, c := range map[string]struct {
		hints   map[string]any
		pd      map[string]any
		want    int64
		wantErr string
	}{
		"no hints, agent's choice": {pd: map[string]any{"root_disk": disks[1]}, want: 99},
		"no hints, no root disk":   {pd: map[string]any{}, want: 0},
		"by name":                  {hints: map[string]any{"name": "sda"}, want: 499},
		"by size operator":         {hints: map[string]any{"size": "<= 200"}, want: 99},
		"by size int":              {hints: map[string]any{"size": float64(500)}, want: 499},
		"by model and rotational":  {hints: map[string]any{"model": "fast", "rotational": false}, want: 99},
		"nothing matches":          {hints: map[string]any{"size": float64(7)}, wantErr: "No disks satisfied root device hints"},
		"unknown hint":             {hints: map[string]any{"colour": "red"}, wantErr: "failed to validate"},
	} {
		t.Run(name, func(t *testing.T) {
			props := map[string]any{}
			if c.hints != nil {
				props["root_device"] = c.hints
			}
			pd := c.pd
			if pd == nil {
				pd = map[string]any{}
			}
			task := hookTask(props)
			err := hookRootDevice(t.Context(), nil, task, inv, pd)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := task.Node.Properties["local_gb"]; got != c.want {
				t.Errorf("local_gb = %v, want %d", got, c.want)
			}
		})
	}
}

// TestValidateInterfacesAddPorts: add_ports selects the valid interfaces
// as Ironic: pxe (only the booting NIC when the agent names it, else all),
// active (with an IP), all; loopback never; none left fails.
func TestValidateInterfacesAddPorts(t *testing.T) {
	inv := func(pxe string) map[string]any {
		return map[string]any{"boot": map[string]any{"pxe_interface": pxe}, "interfaces": []any{
			map[string]any{"name": "eth0", "mac_address": "52:54:00:00:00:01", "ipv4_address": "10.0.0.5"},
			map[string]any{"name": "eth1", "mac_address": "52:54:00:00:00:02", "ipv6_address": "fe80::1%eth1"},
			map[string]any{"name": "eth2", "mac_address": "52:54:00:00:00:03"},
			map[string]any{"name": "lo", "mac_address": "00:00:00:00:00:00", "ipv4_address": "127.0.0.1"},
			map[string]any{"name": "bad", "mac_address": "nope"},
		}}
	}
	for name, c := range map[string]struct {
		mode, pxe string
		want      []string
	}{
		"pxe with boot NIC":    {"pxe", "52:54:00:00:00:02", []string{"eth1"}},
		"pxe without boot NIC": {"pxe", "", []string{"eth0", "eth1", "eth2"}},
		"active":               {"active", "", []string{"eth0", "eth1"}},
		"all":                  {"all", "", []string{"eth0", "eth1", "eth2"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := &Service{cfg: Config{Inspector: config.InspectorOpts{AddPorts: c.mode}}}
			pd := map[string]any{}
			if err := hookValidateInterfaces(s, hookTask(nil), inv(c.pxe), pd); err != nil {
				t.Fatal(err)
			}
			valid := pd["valid_interfaces"].(map[string]any)
			if diff := cmp.Diff(c.want, sortedKeys(valid)); diff != "" {
				t.Errorf("valid interfaces (-want +got):\n%s", diff)
			}
			all := pd["all_interfaces"].(map[string]any)
			if _, ok := all["bad"]; ok {
				t.Error("an invalid MAC address was kept")
			}
			if eth1 := all["eth1"].(map[string]any); eth1["ipv6_address"] != "fe80::1" || eth1["pxe_enabled"] != (c.pxe != "") {
				t.Errorf("eth1 = %v", eth1)
			}
		})
	}
	s := &Service{cfg: Config{Inspector: config.InspectorOpts{AddPorts: "active"}}}
	onlyLo := map[string]any{"interfaces": []any{map[string]any{"name": "lo", "mac_address": "00:00:00:00:00:01", "ipv4_address": "127.0.0.1"}}}
	if err := hookValidateInterfaces(s, hookTask(nil), onlyLo, map[string]any{}); err == nil ||
		!strings.Contains(err.Error(), `no network interfaces match the configuration (add_ports set to "active")`) {
		t.Errorf("only loopback: %v", err)
	}
}
