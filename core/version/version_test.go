package version

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]Version{
		"1.0":          {1, 0},
		"0.0":          {0, 0},
		"1.26":         {1, 26},
		"10.115":       {10, 115},
		"2147483647.0": {MaxComponent, 0},
	}
	for in, want := range good {
		t.Run(in, func(t *testing.T) {
			got, err := Parse(in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", in, err)
			}
			if got != want {
				t.Fatalf("Parse(%q) = %v, want %v", in, got, want)
			}
			if got.String() != in {
				t.Fatalf("String() = %q, want %q", got.String(), in)
			}
		})
	}
	bad := []string{"", "1", "1.", ".1", "1.2.3", "01.2", "1.02", "spam", "-1.2", "1.-2", "+1.2",
		" 1.2", "1.2 ", "1,2", "2147483648.0", "1.99999999999999999999", "１.２", "1.2\n", "0x1.2", "1e2.0"}
	for _, in := range bad {
		t.Run("bad/"+in, func(t *testing.T) {
			if v, err := Parse(in); err == nil {
				t.Fatalf("Parse(%q) = %v, want error", in, v)
			} else if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", in, err)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	tests := map[string]struct {
		a, b string
		want int
	}{
		"equal":       {"1.2", "1.2", 0},
		"minor older": {"1.2", "1.10", -1},
		"minor newer": {"1.10", "1.9", 1},
		"major wins":  {"2.0", "1.99", 1},
		"major older": {"0.99", "1.0", -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, b := MustParse(tc.a), MustParse(tc.b)
			if got := a.Compare(b); got != tc.want {
				t.Fatalf("%s.Compare(%s) = %d, want %d", a, b, got, tc.want)
			}
			if got := b.Compare(a); got != -tc.want {
				t.Fatalf("antisymmetry broken: %s.Compare(%s) = %d", b, a, got)
			}
			if a.Less(b) != (tc.want < 0) || a.AtLeast(b) != (tc.want >= 0) {
				t.Fatalf("Less/AtLeast disagree with Compare for %s, %s", a, b)
			}
		})
	}
}

func TestServedBy(t *testing.T) {
	tests := map[string]struct {
		req, impl string
		want      bool
	}{
		"same":          {"1.5", "1.5", true},
		"older request": {"1.4", "1.5", true},
		"newer request": {"1.6", "1.5", false},
		"other major":   {"2.0", "1.5", false},
		"older major":   {"0.9", "1.5", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := MustParse(tc.req).ServedBy(MustParse(tc.impl)); got != tc.want {
				t.Fatalf("%s served by %s = %v, want %v", tc.req, tc.impl, got, tc.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	b, err := json.Marshal(struct{ V Version }{MustParse("1.31")})
	if err != nil || string(b) != `{"V":"1.31"}` {
		t.Fatalf("marshal = %s, %v", b, err)
	}
	var out struct{ V Version }
	if err := json.Unmarshal([]byte(`{"V":"1.031"}`), &out); err == nil {
		t.Fatalf("unmarshal of 1.031 succeeded: %v", out.V)
	}
}

func TestMax(t *testing.T) {
	if got := Max(MustParse("1.3"), MustParse("1.10"), MustParse("1.2")); got != MustParse("1.10") {
		t.Fatalf("Max = %v", got)
	}
	if !Max().IsZero() {
		t.Fatal("Max() of nothing is not zero")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1.0", "1.26", "01.2", "1.2.3", "spam", "-1.2", "2147483648.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			return
		}
		// Whatever parses must format back to exactly the input: strictness
		// means there is one spelling per version.
		if v.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, v.String())
		}
		if v.Major < 0 || v.Minor < 0 || v.Major > MaxComponent || v.Minor > MaxComponent {
			t.Fatalf("Parse(%q) out of range: %+v", s, v)
		}
	})
}
