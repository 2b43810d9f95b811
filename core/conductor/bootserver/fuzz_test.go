package bootserver

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzRender: whatever instance_info holds, a rendered script is the
// fixed sequence of commands, each on its own line, with nothing iPXE
// would expand, chain or treat as a comment outside the leading comments.
func FuzzRender(f *testing.F) {
	f.Add("http://i.example/k", "http://i.example/r", "console=ttyS0", "", "uefi")
	f.Add("http://u:p@i.example/k\n#!ipxe", "http://i.example/r ||shell", "a${x}", "", "bios")
	f.Add("", "", "", "https://i.example/x.iso?a=1&b=2", "")
	f.Fuzz(func(t *testing.T, kernel, ramdisk, params, iso, mode string) {
		ii := map[string]any{KeyKernel: kernel, KeyRamdisk: ramdisk, KeyKernelAppendParams: params, KeyBootISO: iso, KeyBootMode: mode}
		s, err := Render(Node{UUID: uuidA, ProvisionState: "deploying", InstanceInfo: ii})
		if err != nil {
			if s.Body != refusedBody {
				t.Fatalf("refused (%v) with body %q", err, s.Body)
			}
			return
		}
		lines := strings.Split(strings.TrimSuffix(s.Body, "\n"), "\n")
		var cmds []string
		for _, l := range lines {
			if !strings.HasPrefix(l, "#") {
				cmds = append(cmds, l)
			}
		}
		want := []string{"imgfree", "kernel ", "initrd --name ramdisk ", "boot"}
		if s.Kind == BootISO {
			want = []string{"imgfree", "sanboot --no-describe "}
		}
		if len(cmds) != len(want) || len(lines) > len(cmds)+3 {
			t.Fatalf("script has unexpected lines:\n%s", s.Body)
		}
		for i, c := range cmds {
			if !strings.HasPrefix(c, want[i]) || strings.ContainsAny(c, "$#|\r\t\x00'\\`") {
				t.Fatalf("unsafe command %q in:\n%s", c, s.Body)
			}
			for _, field := range strings.Fields(c) {
				if field == "&&" || field == ";" {
					t.Fatalf("chaining in %q", c)
				}
				if strings.Contains(field, "://") {
					u, err := url.Parse(field)
					if err != nil || u.User != nil || u.Host == "" || !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
						t.Fatalf("URL %q in %q: userinfo left, or not http(s)", field, c)
					}
				}
			}
		}
	})
}

// FuzzParseIdent: any path segment yields invalid or a canonical ident
// that parses to itself.
func FuzzParseIdent(f *testing.F) {
	for _, s := range []string{uuidA, macA, "525400123456", "52-54-00-12-34-56", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		kind, key := parseIdent(in)
		if kind == identInvalid {
			if key != "" {
				t.Fatalf("invalid ident with key %q", key)
			}
			return
		}
		if k2, key2 := parseIdent(key); k2 != kind || key2 != key || key != strings.ToLower(key) {
			t.Fatalf("%q → %v %q → %v %q: not canonical", in, kind, key, k2, key2)
		}
	})
}
