package rpc

import (
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

func TestConductorMethodsValid(t *testing.T) {
	m := ConductorMethods()
	if m.Version() != APIVersion {
		t.Fatalf("table version %s != APIVersion %s", m.Version(), APIVersion)
	}
	if len(m.Names()) == 0 {
		t.Fatal("empty conductor method table")
	}
	// Every argument declares its wire type: the golden files record it.
	for _, name := range m.Names() {
		meth, _ := m.Lookup(name)
		for _, a := range meth.Args {
			if a.Type == "" {
				t.Errorf("%s(%s) declares no Type", name, a.Name)
			}
		}
	}
}

// Ironic's test_release_mappings: HEAD's RPC version is the code's.
func TestHeadMatchesCode(t *testing.T) {
	if got := release.Default().Head().RPC; got != APIVersion {
		t.Fatalf("core/release HEAD.RPC = %s but the RPC API is %s: bump them together", got, APIVersion)
	}
}

func TestNewMethodsRejects(t *testing.T) {
	v := version.MustParse
	tests := map[string]struct {
		m    Method
		want string
	}{
		"method newer than API": {Method{Name: "m", Since: v("1.2")}, "not within API 1.1"},
		"other major":           {Method{Name: "m", Since: v("2.0")}, "not within API"},
		"arg newer than API":    {Method{Name: "m", Since: v("1.0"), Args: []Arg{{Name: "a", Since: v("1.3")}}}, "outside"},
		"arg older than method": {Method{Name: "m", Since: v("1.1"), Args: []Arg{{Name: "a", Since: v("1.0")}}}, "outside"},
		"late required arg":     {Method{Name: "m", Since: v("1.0"), Args: []Arg{{Name: "a", Since: v("1.1"), Required: true}}}, "must be optional"},
		"reserved arg":          {Method{Name: "m", Since: v("1.0"), Args: []Arg{{Name: "context", Since: v("1.0")}}}, "reserved"},
		"value newer than API":  {Method{Name: "m", Since: v("1.0"), Args: []Arg{{Name: "a", Since: v("1.0"), Values: map[string]version.Version{"x": v("1.2")}}}}, "must be newer"},
		"value as old as arg":   {Method{Name: "m", Since: v("1.0"), Args: []Arg{{Name: "a", Since: v("1.1"), Values: map[string]version.Version{"x": v("1.1")}}}}, "must be newer"},
		"unknown type":          {Method{Name: "m", Since: v("1.0"), Args: []Arg{{Name: "a", Since: v("1.0"), Type: "str"}}}, `unknown type "str"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := NewMethods(v("1.1"), tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	m := Method{Name: "m", Since: v("1.0")}
	if _, err := NewMethods(v("1.1"), m, m); err == nil {
		t.Fatal("duplicate method accepted")
	}
}
