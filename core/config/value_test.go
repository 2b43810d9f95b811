package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := map[string]struct {
		kind    Kind
		in      string
		want    any
		wantErr bool
	}{
		"bool true":            {kind: Bool, in: "true", want: true},
		"bool True":            {kind: Bool, in: " True ", want: true},
		"bool yes":             {kind: Bool, in: "yes", want: true},
		"bool on":              {kind: Bool, in: "ON", want: true},
		"bool 1":               {kind: Bool, in: "1", want: true},
		"bool false":           {kind: Bool, in: "false", want: false},
		"bool no":              {kind: Bool, in: "no", want: false},
		"bool off":             {kind: Bool, in: "off", want: false},
		"bool 0":               {kind: Bool, in: "0", want: false},
		"bool t":               {kind: Bool, in: "t", wantErr: true},
		"bool empty":           {kind: Bool, in: "", wantErr: true},
		"int":                  {kind: Int, in: "6385", want: 6385},
		"int negative":         {kind: Int, in: "-1", want: -1},
		"int float":            {kind: Int, in: "1.5", wantErr: true},
		"int hex":              {kind: Int, in: "0x10", wantErr: true},
		"int empty":            {kind: Int, in: "", wantErr: true},
		"int overflow":         {kind: Int, in: "99999999999999999999", wantErr: true},
		"seconds":              {kind: Duration, in: "15", want: 15 * time.Second},
		"fraction":             {kind: Duration, in: "0.5", want: 500 * time.Millisecond},
		"go duration":          {kind: Duration, in: "1m30s", want: 90 * time.Second},
		"go milliseconds":      {kind: Duration, in: "250ms", want: 250 * time.Millisecond},
		"negative seconds":     {kind: Duration, in: "-2", want: -2 * time.Second},
		"duration words":       {kind: Duration, in: "ten", wantErr: true},
		"duration inf":         {kind: Duration, in: "inf", wantErr: true},
		"duration NaN":         {kind: Duration, in: "NaN", wantErr: true},
		"duration huge":        {kind: Duration, in: "99999999999", wantErr: true},
		"duration exponent":    {kind: Duration, in: "1e3", wantErr: true},
		"minutes stay minutes": {kind: Duration, in: "1m", want: time.Minute},
		"nanosecond exact":     {kind: Duration, in: "3723.000000001", want: time.Hour + 2*time.Minute + 3*time.Second + 1},
		"duration empty":       {kind: Duration, in: "", wantErr: true},
		"list":                 {kind: List, in: "a, b ,c", want: []string{"a", "b", "c"}},
		"list empty":           {kind: List, in: "", want: []string{}},
		"list blanks":          {kind: List, in: " , a,,", want: []string{"a"}},
		"string verbatim":      {kind: String, in: " x ", want: " x "},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parse(tc.kind, tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parse(%s, %q) = %v, want error", tc.kind, tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10", "0.5", "90s", "-1", "1e9", "1h2m3.5s", "", "-0.000000001", "2562047h47m16.854775807s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			return
		}
		// What a file holds must read back the same.
		again, err := parseDuration(format(Duration, d))
		if err != nil || again != d {
			t.Fatalf("%q → %v → %q → %v, %v", s, d, format(Duration, d), again, err)
		}
	})
}

func TestMaskURL(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"no password":        {"postgresql://rivet@db:5432/rivet", "postgresql://rivet@db:5432/rivet"},
		"password":           {"postgresql://rivet:pw@db:5432/rivet", "postgresql://rivet:******@db:5432/rivet"},
		"password with @ /":  {"mysql://u:p@ss/w@db/rivet", "mysql://u:******@db/rivet"},
		"go mysql form":      {"u:pw@tcp(db:3306)/rivet", "u:******@tcp(db:3306)/rivet"},
		"sqlite":             {"sqlite:////var/lib/rivet/rivet.db", "sqlite:////var/lib/rivet/rivet.db"},
		"query password":     {"postgresql://db/rivet?password=pw&sslmode=off", "postgresql://db/rivet?password=******&sslmode=off"},
		"empty user":         {"postgresql://:pw@db/rivet", "postgresql://:******@db/rivet"},
		"not a url":          {"rivet.db", "rivet.db"},
		"query with PWD key": {"x://h/d?PWD=pw", "x://h/d?PWD=******"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := maskURL(tc.in); got != tc.want {
				t.Fatalf("maskURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"port", "host_ip", "max_limit", "cert_file", "key_file"}
	tests := map[string]struct{ in, want string }{
		"swap":      {"prot", ` (did you mean "port"?)`},
		"case":      {"PORT", ` (did you mean "port"?)`},
		"missing _": {"certfile", ` (did you mean "cert_file"?)`},
		"far":       {"frobnicate", ""},
		"short far": {"host", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := suggest(tc.in, known); got != tc.want {
				t.Fatalf("suggest(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
