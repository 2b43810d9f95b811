package redact

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDict(t *testing.T) {
	tests := map[string]struct{ in, want map[string]any }{
		"nil": {in: nil, want: nil},
		"driver_info": {
			in:   map[string]any{"ipmi_password": "x", "ipmi_username": "admin", "ipmi_address": "1.2.3.4", "ipmi_port": 623.0},
			want: map[string]any{"ipmi_password": Masked, "ipmi_username": "admin", "ipmi_address": "1.2.3.4", "ipmi_port": 623.0},
		},
		"URL values": {
			in:   map[string]any{"redfish_address": "https://admin:pw@bmc", "image_source": "https://u:p@mirror/img"},
			want: map[string]any{"redfish_address": "https://***:***@bmc", "image_source": "https://***:***@mirror/img"},
		},
		"secret keys in extra": {
			in: map[string]any{"password": "a", "api_token": "b", "client_secret": "c", "ssh_private_key": "d",
				"snmp_priv_key": "e", "key": "kept", "owner": "ops"},
			want: map[string]any{"password": Masked, "api_token": Masked, "client_secret": Masked, "ssh_private_key": Masked,
				"snmp_priv_key": Masked, "key": "kept", "owner": "ops"},
		},
		"nested": {
			in: map[string]any{"a": map[string]any{"b": map[string]any{"Password": "x", "url": "ftp://u:p@h/"}},
				"l": []any{map[string]any{"token": "t"}, "http://u@h", 1.0, nil, true}},
			want: map[string]any{"a": map[string]any{"b": map[string]any{"Password": Masked, "url": "ftp://***:***@h/"}},
				"l": []any{map[string]any{"token": Masked}, "http://***@h", 1.0, nil, true}},
		},
		"secret key over an object": {
			in:   map[string]any{"secret": map[string]any{"a": "b"}, "tokens": []any{"x"}},
			want: map[string]any{"secret": Masked, "tokens": Masked},
		},
		"text values": {
			in:   map[string]any{"cmd": "ipmitool password=abc", "note": "see admin@example.com"},
			want: map[string]any{"cmd": "ipmitool password=***", "note": "see admin@example.com"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Dict(tc.in)); d != "" {
				t.Errorf("Dict (-want +got):\n%s", d)
			}
		})
	}
}

func TestDictLeavesItsInputAlone(t *testing.T) {
	in := map[string]any{"password": "x", "n": map[string]any{"token": "y"}, "l": []any{"http://u:p@h"}}
	_ = Dict(in)
	want := map[string]any{"password": "x", "n": map[string]any{"token": "y"}, "l": []any{"http://u:p@h"}}
	if d := cmp.Diff(want, in); d != "" {
		t.Errorf("input changed (-want +got):\n%s", d)
	}
}

func TestValue(t *testing.T) {
	if got := Value([]string{"http://u:p@h", "x"}); !cmp.Equal(got, []string{"http://***:***@h", "x"}) {
		t.Errorf("[]string: %v", got)
	}
	if got := Value(42); got != 42 {
		t.Errorf("int: %v", got)
	}
}

// TestDictCleanIsFree: the common document, with nothing to mask, comes
// back as it is without an allocation (every API answer masks every
// document of every resource).
func TestDictCleanIsFree(t *testing.T) {
	m := map[string]any{"cpu_arch": "x86_64", "cpus": 32.0, "bmc": "https://10.0.0.1/redfish/v1",
		"capabilities": map[string]any{"boot_mode": "uefi"}, "l": []any{"a", 1.0}}
	if got := Dict(m); !cmp.Equal(got, m) {
		t.Fatalf("Dict changed a clean document: %v", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Dict(m) }); n != 0 {
		t.Errorf("Dict of a clean document allocates %v times", n)
	}
}
