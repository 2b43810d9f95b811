package onlinemigrations

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
)

func noop(context.Context, *db.DB, int, map[string]string) (int, int, error) { return 0, 0, nil }

func TestRegister(t *testing.T) {
	tests := map[string]struct {
		m    Migration
		want string // error substring; "" means accepted
	}{
		"ok":           {Migration{Name: "backfill_x", Run: noop}, ""},
		"duplicate":    {Migration{Name: "first", Run: noop}, "registered twice"},
		"bad name":     {Migration{Name: "Backfill-X", Run: noop}, "lower-case identifier"},
		"no func":      {Migration{Name: "nothing"}, "no Run function"},
		"negative min": {Migration{Name: "neg", Run: noop, MinServiceVersion: -1}, "negative"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &Registry{}
			if err := r.Register(Migration{Name: "first", Run: noop}); err != nil {
				t.Fatal(err)
			}
			err := r.Register(tc.m)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Register: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	r := &Registry{}
	for _, m := range []Migration{{Name: "a", Run: noop, Options: []string{"k", "j"}}, {Name: "b", Run: noop}} {
		if err := r.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]struct {
		raw     []string
		want    map[string]map[string]string
		wantErr string
	}{
		"none":         {nil, map[string]map[string]string{}, ""},
		"two":          {[]string{"a.k=1", "a.j=x=y"}, map[string]map[string]string{"a": {"k": "1", "j": "x=y"}}, ""},
		"last wins":    {[]string{"a.k=1", "a.k=2"}, map[string]map[string]string{"a": {"k": "2"}}, ""},
		"empty value":  {[]string{"a.k="}, map[string]map[string]string{"a": {"k": ""}}, ""},
		"no dot":       {[]string{"foo"}, nil, "Malformed option foo"},
		"no equals":    {[]string{"a.k"}, nil, "Malformed option a.k"},
		"empty key":    {[]string{"a.=1"}, nil, "Malformed option a.=1"},
		"unknown":      {[]string{"c.k=1"}, nil, `unknown migration "c" (valid migrations: a, b)`},
		"no options":   {[]string{"b.k=1"}, nil, "it takes no options"},
		"unknown key":  {[]string{"a.z=1"}, nil, "valid keys: k, j"},
		"leading dots": {[]string{".k=1"}, nil, "Malformed option .k=1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseOptions(tc.raw, r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrBadArguments) {
					t.Fatalf("err = %v, want %q matching ErrBadArguments", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
