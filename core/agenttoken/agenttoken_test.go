package agenttoken

import (
	"encoding/base64"
	"testing"
)

func TestNew(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tok := New()
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(raw) != 32 || len(tok) != 43 {
			t.Fatalf("token %q: %d bytes, %v", tok, len(raw), err)
		}
		if seen[tok] {
			t.Fatalf("token %q issued twice", tok)
		}
		seen[tok] = true
	}
}

func TestValid(t *testing.T) {
	tok := New()
	withTok := map[string]any{Key: tok, "agent_url": "http://a:9999", "other": 1}
	tests := []struct {
		name      string
		dii       map[string]any
		presented string
		want      bool
	}{
		{"right", withTok, tok, true},
		{"other token", withTok, New(), false},
		{"prefix", withTok, tok[:42], false},
		{"empty", withTok, "", false},
		{"none stored", map[string]any{}, "", false},
		{"nil dii", nil, tok, false},
		{"stored empty", map[string]any{Key: ""}, "", false},
		{"stored masked", map[string]any{Key: Masked}, Masked, false},
		{"stored not a string", map[string]any{Key: 5}, "5", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Valid(tc.dii, tc.presented); got != tc.want {
				t.Errorf("Valid = %v, want %v", got, tc.want)
			}
			if got := ValidDigest(tc.dii, Digest(tc.presented)); got != tc.want {
				t.Errorf("ValidDigest = %v, want %v", got, tc.want)
			}
		})
	}
	if ValidDigest(withTok, tok) {
		t.Error("the token itself passed as its digest")
	}
}

func TestWipe(t *testing.T) {
	in := map[string]any{Key: New(), "agent_url": "http://a:9999", "agent_version": "9"}
	out := Wipe(in)
	if _, ok := out[Key]; ok || out["agent_url"] != nil || out["agent_version"] != "9" || len(out) != 1 {
		t.Fatalf("Wipe = %v", out)
	}
	if len(in) != 3 {
		t.Fatal("Wipe changed its argument")
	}
	plain := map[string]any{"a": 1}
	if got := Wipe(plain); len(got) != 1 || got["a"] != 1 {
		t.Fatalf("Wipe of nothing = %v", got)
	}
	if Wipe(nil) != nil {
		t.Fatal("Wipe(nil) is not nil")
	}
}
