package keyring

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func key(b byte) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(b), KeySize)))
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in      string
		current string
		ids     []string
		err     string
	}{
		"one":                 {in: "a:" + key('a'), current: "a", ids: []string{"a"}},
		"comments and blanks": {in: "# rotated 2026-11\n\nnew:" + key('n') + "\n", current: "new", ids: []string{"new"}},
		"bad key id":          {in: "o d:" + key('a'), err: `line 1: key id "o d"`},
		"two":                 {in: "new:" + key('n') + "\nold.1:" + key('o') + "\n", current: "new", ids: []string{"new", "old.1"}},
		"empty":               {in: "# nothing\n", err: "no key"},
		"no colon":            {in: key('a'), err: "line 1: want <key-id>:<base64 key>"},
		"short key":           {in: "a:" + base64.StdEncoding.EncodeToString([]byte("short")), err: `line 1: key "a" is not the base64 of 32 bytes`},
		"not base64":          {in: "a:!!!", err: `line 1: key "a" is not the base64`},
		"duplicate":           {in: "a:" + key('a') + "\na:" + key('b'), err: `line 2: key id "a" appears twice`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k, err := Parse([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), key('a')) || strings.Contains(err.Error(), key('b')) {
					t.Errorf("error shows a key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.Current() != tc.current || strings.Join(k.IDs(), ",") != strings.Join(tc.ids, ",") {
				t.Errorf("current %q ids %v, want %q %v", k.Current(), k.IDs(), tc.current, tc.ids)
			}
		})
	}
}

func TestSealOpen(t *testing.T) {
	both, _ := Parse([]byte("new:" + key('n') + "\nold:" + key('o')))
	old, _ := Parse([]byte("old:" + key('o')))
	other, _ := Parse([]byte("new:" + key('x')))
	env, err := old.Seal([]byte(`"hunter2"`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(env, "rivet-enc:v1:old:") || strings.Contains(env, "hunter2") {
		t.Fatalf("envelope %q", env)
	}
	if again, _ := old.Seal([]byte(`"hunter2"`)); again == env {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	if got, err := both.Open(env); err != nil || string(got) != `"hunter2"` {
		t.Errorf("old key second in the file: %q, %v", got, err)
	}
	tampered := strings.Replace(env, "rivet-enc:v1:old:", "rivet-enc:v1:new:", 1)
	tests := map[string]struct {
		k       *Keyring
		env     string
		unknown string
	}{
		"key id not in file": {k: other, env: env, unknown: "old"},
		"no keyring":         {k: nil, env: env, unknown: "old"},
		"swapped key id":     {k: both, env: tampered},
		"same id, other key": {k: other, env: tampered},
		"truncated":          {k: both, env: env[:len(env)-8]},
		"not base64":         {k: both, env: "rivet-enc:v1:old:***"},
		"no payload":         {k: both, env: "rivet-enc:v1:old"},
		"bad key id":         {k: both, env: "rivet-enc:v1:o/d:AAAA"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := tc.k.Open(tc.env)
			var uk *UnknownKeyError
			switch {
			case tc.unknown != "":
				if !errors.As(err, &uk) || uk.KeyID != tc.unknown || !strings.Contains(err.Error(), `"`+tc.unknown+`"`) {
					t.Errorf("err = %v, want unknown key %q", err, tc.unknown)
				}
			case !errors.Is(err, ErrMalformed):
				t.Errorf("err = %v, want ErrMalformed", err)
			}
		})
	}
}
