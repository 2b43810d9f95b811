package release

import (
	"errors"
	"strings"
	"testing"
)

func TestStepsBehind(t *testing.T) {
	tb := testTable(t) // 0.1 sv 1, 0.2 sv 2, HEAD sv 3
	// Right after cutting 0.2, HEAD shares its service version: a 0.1
	// service is then one release behind, not two.
	justCut, err := NewTable(
		Entry{Version: HeadKey, API: v("1.31"), RPC: v("1.1"), Objects: objs("Node", "1.1,1.0", "Port", "1.0"), ServiceVersion: 2},
		Entry{Version: "0.1", Name: "anvil", API: v("1.26"), RPC: v("1.0"), Objects: objs("Node", "1.0", "Port", "1.0"), ServiceVersion: 1},
		Entry{Version: "0.2", Name: "bellows", API: v("1.31"), RPC: v("1.1"), Objects: objs("Node", "1.1,1.0", "Port", "1.0"), ServiceVersion: 2},
	)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		tb        *Table
		sv        int
		steps     int
		speaks    string
		wantKnown bool
	}{
		"HEAD":                   {tb: tb, sv: 3, steps: 0, speaks: HeadKey, wantKnown: true},
		"newer than HEAD":        {tb: tb, sv: 4, steps: 0, speaks: HeadKey, wantKnown: true},
		"previous release":       {tb: tb, sv: 2, steps: 1, speaks: "0.2", wantKnown: true},
		"two releases back":      {tb: tb, sv: 1, steps: 2, speaks: "0.1", wantKnown: true},
		"older than the table":   {tb: tb, sv: 0},
		"just cut: previous":     {tb: justCut, sv: 1, steps: 1, speaks: "0.1", wantKnown: true},
		"just cut: same release": {tb: justCut, sv: 2, steps: 0, speaks: HeadKey, wantKnown: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			steps, speaks, ok := tc.tb.StepsBehind(tc.sv)
			if ok != tc.wantKnown || steps != tc.steps || speaks.Version != tc.speaks {
				t.Fatalf("StepsBehind(%d) = %d, %q, %v; want %d, %q, %v", tc.sv, steps, speaks.Version, ok, tc.steps, tc.speaks, tc.wantKnown)
			}
		})
	}
}

func TestCheckFinalized(t *testing.T) {
	tb := testTable(t)
	for _, fin := range []Finalized{{}, {Release: "0.1", ServiceVersion: 1}, {Release: Current, ServiceVersion: 3}} {
		if err := tb.CheckFinalized("rivet-api", fin); err != nil {
			t.Errorf("finalized at %+v: %v", fin, err)
		}
	}
	err := tb.CheckFinalized("rivet-conductor", Finalized{Release: "0.4.0", ServiceVersion: 4})
	var tooOld *ServiceTooOldError
	if !errors.As(err, &tooOld) {
		t.Fatalf("finalized above HEAD: %v, want *ServiceTooOldError", err)
	}
	want := "rivet-conductor runs release " + Current + " (service version 3) but the cluster was finalized at release 0.4.0 (service version 4); " +
		"services older than the finalized release cannot read its data: run 0.4.0 or newer"
	if err.Error() != want {
		t.Fatalf("message:\n got %s\nwant %s", err, want)
	}
}

func TestCheckSkew(t *testing.T) {
	tb := testTable(t)
	peers := func(svs ...int) []Peer {
		var out []Peer
		for i, sv := range svs {
			out = append(out, Peer{Name: "rivet-conductor on c" + string(rune('0'+i)), Release: "r" + string(rune('0'+sv)), ServiceVersion: sv})
		}
		return out
	}
	for name, others := range map[string][]Peer{"alone": nil, "all HEAD": peers(3, 3), "one release back": peers(3, 2)} {
		if err := tb.CheckSkew("rivet-api", others); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	tests := map[string]struct {
		others []Peer
		want   []string
	}{
		"two releases back": {others: peers(3, 1, 2), want: []string{
			"rivet-conductor on c1 runs release r1 (service version 1), more than one release older than this rivet-api (release " + Current + ", service version 3)",
			"upgrade one release at a time: upgrade rivet-conductor on c1 to 0.2 first"}},
		"older than the table": {others: peers(0), want: []string{
			"rivet-conductor on c0 runs release r0 (service version 0), older than any release this rivet-api",
			"upgrade one release at a time: upgrade rivet-conductor on c0 to 0.1 first"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tb.CheckSkew("rivet-api", tc.others)
			var ahead *TooFarAheadError
			if !errors.As(err, &ahead) {
				t.Fatalf("%v, want *TooFarAheadError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestCheckEffective(t *testing.T) {
	tb := testTable(t)
	old := []Peer{{Name: "rivet-conductor on c1", Release: "0.2.1", ServiceVersion: 2}, {Name: "rivet-api on a1", Release: Current, ServiceVersion: 3}}
	r02, _ := tb.Lookup("0.2")
	r01, _ := tb.Lookup("0.1")
	for name, tc := range map[string]struct {
		effective Entry
		others    []Peer
	}{
		"alone":                 {effective: tb.Head()},
		"pinned to the oldest":  {effective: r02, others: old},
		"pinned below":          {effective: r01, others: old},
		"everyone on HEAD too ": {effective: tb.Head(), others: old[1:]},
	} {
		if err := tb.CheckEffective("rivet-api", tc.effective, tc.others); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	err := tb.CheckEffective("rivet-api", tb.Head(), old)
	var tooNew *PinTooNewError
	if !errors.As(err, &tooNew) {
		t.Fatalf("unpinned beside 0.2: %v, want *PinTooNewError", err)
	}
	want := "this rivet-api would use release " + Current + " (service version 3) but rivet-conductor on c1 runs release 0.2.1 (service version 2), " +
		"which cannot read what " + Current + " writes: set [DEFAULT] pin_release_version = 0.2 (or auto) until every service runs the new release"
	if err.Error() != want {
		t.Fatalf("message:\n got %s\nwant %s", err, want)
	}
}
