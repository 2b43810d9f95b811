package bootserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRenderRefuses: whatever could make iPXE run something other than
// the rendered commands is refused, naming the key and the reason but not
// the value.
func TestRenderRefuses(t *testing.T) {
	const k, r = "http://i.example/k", "http://i.example/r"
	tests := map[string]struct {
		ii   map[string]any
		want string // the error's text after "instance_info cannot be rendered safely: "
	}{
		"newline then a new script":  {ii: map[string]any{KeyKernel: k + "\n#!ipxe\nshell", KeyRamdisk: r}, want: "kernel: a newline at offset 18 is not allowed in a URL"},
		"carriage return":            {ii: map[string]any{KeyKernel: k, KeyRamdisk: r + "\rshell"}, want: "ramdisk: a carriage return at offset 18 is not allowed in a URL"},
		"space then || chaining":     {ii: map[string]any{KeyKernel: k + " || shell", KeyRamdisk: r}, want: "kernel: a space at offset 18 is not allowed in a URL"},
		"#!ipxe in the fragment":     {ii: map[string]any{KeyBootISO: "http://i.example/x.iso#!ipxe"}, want: `boot_iso: '#' at offset 22 is not allowed in a URL`},
		"settings expansion":         {ii: map[string]any{KeyBootISO: "http://i.example/${password}"}, want: `boot_iso: '$' at offset 17 is not allowed in a URL`},
		"tab":                        {ii: map[string]any{KeyKernel: "http://i.example/\tk", KeyRamdisk: r}, want: "kernel: a tab at offset 17 is not allowed in a URL"},
		"NUL":                        {ii: map[string]any{KeyKernel: "http://i.example/\x00", KeyRamdisk: r}, want: "kernel: control character 0x00 at offset 17 is not allowed in a URL"},
		"raw UTF-8":                  {ii: map[string]any{KeyKernel: "http://i.example/é", KeyRamdisk: r}, want: "kernel: a non-ASCII byte (percent-encode it) at offset 17 is not allowed in a URL"},
		"ftp":                        {ii: map[string]any{KeyKernel: "ftp://i.example/k", KeyRamdisk: r}, want: "kernel: not an http or https URL"},
		"image ref, not a URL":       {ii: map[string]any{KeyKernel: "3c6a1e62-26a0-4b8e-9f4e-7e2b4d1c0a11", KeyRamdisk: r}, want: "kernel: not an http or https URL"},
		"opaque user:pass@host form": {ii: map[string]any{KeyKernel: "admin:SECRET@i.example/k", KeyRamdisk: r}, want: "kernel: not a URL"},
		"no host":                    {ii: map[string]any{KeyKernel: "http:///k", KeyRamdisk: r}, want: "kernel: URL has no host"},
		"too long":                   {ii: map[string]any{KeyKernel: k + strings.Repeat("a", maxLen), KeyRamdisk: r}, want: "kernel: longer than 2048 characters"},
		"missing ramdisk":            {ii: map[string]any{KeyKernel: k}, want: "ramdisk: missing"},
		"empty kernel":               {ii: map[string]any{KeyKernel: "", KeyRamdisk: r}, want: "kernel: missing"},
		"blank boot_iso, no kernel":  {ii: map[string]any{KeyBootISO: " ", KeyRamdisk: r}, want: "kernel: missing"},
		"nothing at all":             {ii: nil, want: "kernel: missing"},
		"kernel not a string":        {ii: map[string]any{KeyKernel: 42.0, KeyRamdisk: r}, want: "kernel: not a string"},
		"boot_iso not a string":      {ii: map[string]any{KeyBootISO: []any{"http://i.example/x.iso"}}, want: "boot_iso: not a string"},
		"params with a newline":      {ii: map[string]any{KeyKernel: k, KeyRamdisk: r, KeyKernelAppendParams: "quiet\nshell"}, want: "kernel_append_params: a newline at offset 5 is not allowed"},
		"params chaining a command":  {ii: map[string]any{KeyKernel: k, KeyRamdisk: r, KeyKernelAppendParams: "quiet || shell"}, want: `kernel_append_params: '|' at offset 6 is not allowed`},
		"params expanding a setting": {ii: map[string]any{KeyKernel: k, KeyRamdisk: r, KeyKernelAppendParams: "x=${root-password}"}, want: `kernel_append_params: '$' at offset 2 is not allowed`},
		"params not a string":        {ii: map[string]any{KeyKernel: k, KeyRamdisk: r, KeyKernelAppendParams: map[string]any{}}, want: "kernel_append_params: not a string"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := Render(Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: tc.ii})
			if !errors.Is(err, ErrUnsafeInstanceInfo) {
				t.Fatalf("err = %v, want ErrUnsafeInstanceInfo", err)
			}
			if diff := cmp.Diff(ErrUnsafeInstanceInfo.Error()+": "+tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "i.example") {
				t.Errorf("the error echoes the value: %v", err)
			}
			if s.Kind != BootRefused || s.Body != refusedBody {
				t.Errorf("script = %q %q, want the refusal script", s.Kind, s.Body)
			}
		})
	}
}

// TestRenderAccepts: ordinary URLs (signed queries, ports, IPv6
// literals, escapes) and kernel parameters render unchanged.
func TestRenderAccepts(t *testing.T) {
	tests := map[string]struct {
		ii       map[string]any
		wantLine string
	}{
		"signed query and port": {ii: map[string]any{KeyBootISO: "https://swift.example:8080/v1/AUTH_x/c/deploy.iso?temp_url_sig=0a1b&temp_url_expires=17"},
			wantLine: "sanboot --no-describe https://swift.example:8080/v1/AUTH_x/c/deploy.iso?temp_url_sig=0a1b&temp_url_expires=17"},
		"IPv6 literal and escapes": {ii: map[string]any{KeyBootISO: "http://[fd00::1]/images/a%20b.iso"},
			wantLine: "sanboot --no-describe http://[fd00::1]/images/a%20b.iso"},
		"upper-case scheme": {ii: map[string]any{KeyKernel: "HTTP://i.example/k", KeyRamdisk: "http://i.example/r", KeyKernelAppendParams: "  "},
			wantLine: "kernel http://i.example/k initrd=ramdisk"},
		"params with = , : / and -": {ii: map[string]any{KeyKernel: "http://i.example/k", KeyRamdisk: "http://i.example/r",
			KeyKernelAppendParams: "ipa-api-url=http://10.0.0.1:6385 console=tty0,115200 -- nofb"},
			wantLine: "kernel http://i.example/k initrd=ramdisk ipa-api-url=http://10.0.0.1:6385 console=tty0,115200 -- nofb"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := Render(Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: tc.ii})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(s.Body, "\n"+tc.wantLine+"\n") {
				t.Errorf("script lacks the line %q:\n%s", tc.wantLine, s.Body)
			}
			if len(s.Scrubbed) != 0 {
				t.Errorf("Scrubbed = %v, want none", s.Scrubbed)
			}
		})
	}
}

// TestRenderStates: only deploying, wait call-back and active boot the
// deploy image; inspecting and inspect wait boot the agent ramdisk (the
// Source puts it in InstanceInfo: StoreSource, AgentRamdisk).
func TestRenderStates(t *testing.T) {
	for _, st := range []string{"enroll", "verifying", "manageable", "inspecting", "inspect wait", "inspect failed",
		"cleaning", "clean wait", "clean failed", "available", "deploying", "wait call-back", "deploy failed",
		"active", "deleting", "adopting", "adopt failed", "error", ""} {
		s, err := Render(Node{UUID: uuidA, ProvisionState: st, InstanceInfo: ramdiskInfo()})
		want := BootLocal
		if st == "deploying" || st == "wait call-back" || st == "active" || st == "inspecting" || st == "inspect wait" {
			want = BootRamdisk
		}
		if err != nil || s.Kind != want {
			t.Errorf("%q: kind %q, err %v; want %q", st, s.Kind, err, want)
		}
	}
}

// TestParseIdent: the forms iPXE prints a MAC or a UUID in, normalised
// as the database stores them.
func TestParseIdent(t *testing.T) {
	tests := map[string]struct {
		kind identKind
		key  string
	}{
		"52:54:00:AB:cd:ef":                    {identMAC, "52:54:00:ab:cd:ef"},
		"52-54-00-ab-cd-ef":                    {identMAC, "52:54:00:ab:cd:ef"},
		"525400ABCDEF":                         {identMAC, "52:54:00:ab:cd:ef"},
		"5254.00ab.cdef":                       {identMAC, "52:54:00:ab:cd:ef"},
		"1BE26C0B-03F2-4D2E-AE87-C02D7F33C123": {identUUID, uuidA},
		"00:00:00:00:00:00:00:00":              {identInvalid, ""}, // 8-byte EUI-64
		"1be26c0b03f24d2eae87c02d7f33c123":     {identInvalid, ""},
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c12g": {identInvalid, ""},
		"52540012345":                          {identInvalid, ""},
		"node-1":                               {identInvalid, ""},
		"":                                     {identInvalid, ""},
	}
	for in, want := range tests {
		kind, key := parseIdent(in)
		if kind != want.kind || key != want.key {
			t.Errorf("parseIdent(%q) = %v %q, want %v %q", in, kind, key, want.kind, want.key)
		}
	}
}
