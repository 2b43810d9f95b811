package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The floor answers each node's GET with the bytes the server answered:
// status, headers (but Date and Content-Length, net/http's own) and body.
func TestFloorServesTheFetchedBytes(t *testing.T) {
	bodies := map[string]string{"/v1/nodes/u-1": `{"uuid": "u-1"}`, "/v1/nodes/u-2": `{"uuid": "u-2", "name": "two"}`}
	var gotVersion string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotVersion = r.Header.Get("X-Openstack-Ironic-Api-Version")
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Openstack-Ironic-Api-Version", "1.26")
		_, _ = io.WriteString(w, body)
	}))
	defer origin.Close()
	c := newClient(options{url: origin.URL, apiVersion: "1.26"})
	fr, err := fetchFloorResponses(t.Context(), c, []string{"u-2", "u-1"})
	if err != nil {
		t.Fatal(err)
	}
	if gotVersion != "1.26" {
		t.Errorf("fetched with microversion %q, want wrk's 1.26", gotVersion)
	}
	if d := cmp.Diff([]string{"u-1", "u-2"}, fr.uuids()); d != "" {
		t.Errorf("uuids (-want +got):\n%s", d)
	}
	// Through the file the suite writes for the floor's process.
	b, err := json.Marshal(fr)
	if err != nil {
		t.Fatal(err)
	}
	var read floorResponses
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	floor := httptest.NewServer(floorHandler(read))
	defer floor.Close()
	for path, want := range bodies {
		a, b := fetch(t, origin.URL+path), fetch(t, floor.URL+path)
		if d := cmp.Diff(a, b); d != "" {
			t.Errorf("GET %s: floor differs from origin (-origin +floor):\n%s", path, d)
		}
		if b.Body != want {
			t.Errorf("GET %s: body %q", path, b.Body)
		}
	}
	if r := fetch(t, floor.URL+"/v1/nodes/u-3"); r.Status != http.StatusNotFound {
		t.Errorf("unknown node: status %d", r.Status)
	}
	resp, err := http.Post(floor.URL+"/v1/nodes/u-1", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST: status %d", resp.StatusCode)
	}

	if _, err := fetchFloorResponses(t.Context(), c, []string{"u-3"}); err == nil || !strings.Contains(err.Error(), "status 404") {
		t.Errorf("a node the server lacks: %v", err)
	}
	if _, err := fetchFloorResponses(t.Context(), c, nil); err == nil {
		t.Error("no nodes: no error")
	}
}

type response struct {
	Status int
	Header http.Header
	Body   string
}

func fetch(t *testing.T, url string) response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Header.Del("Date")
	return response{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// floorRuns are two rounds of rivet dev and the machine floor; the floor's
// share over 5 ms is 0 in round 2 (no ratio that round) and rivet dev's
// unknown in round 1 (an older wrk script).
func floorRuns() []TargetRun {
	pct := func(x float64) *float64 { return &x }
	return []TargetRun{
		{Target: targetDev, Round: 1, Results: []Result{{Workload: "wrk-get", Rate: 8000, P50ms: 2, P99ms: 16}}},
		{Target: targetFloor, Round: 1, Results: []Result{{Workload: "wrk-get", Rate: 20000, P50ms: 0.5, P99ms: 4, Over5msPct: pct(0.5)}}},
		{Target: targetDev, Round: 2, Results: []Result{{Workload: "wrk-get", Rate: 9000, P50ms: 2, P99ms: 18, Over5msPct: pct(3)}}},
		{Target: targetFloor, Round: 2, Results: []Result{{Workload: "wrk-get", Rate: 18000, P50ms: 1, P99ms: 6, Over5msPct: pct(0)}}},
	}
}

func TestFloorGoals(t *testing.T) {
	byName := map[string]Goal{}
	for _, g := range computeGoals(GoalsReport{Runs: floorRuns()}) {
		byName[g.Name] = g
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if g := byName["GET vs machine floor: req/s, wrk c16 (rivet dev ÷ floor)"]; g.Ratio == nil || !near(g.Ratio.Min, 0.4) || !near(g.Ratio.Max, 0.5) ||
		!near(g.Base.Median, 19000) || g.Baseline != "machine floor" || g.Met != "-" {
		t.Errorf("rate row %+v", g)
	}
	if g := byName["GET vs machine floor: p99"]; g.Ratio == nil || !near(g.Ratio.Median, 3.5) || !near(g.Figure.Median, 17) || !near(g.Base.Median, 5) {
		t.Errorf("p99 row %+v", g)
	}
	if g := byName["GET vs machine floor: p50"]; g.Ratio == nil || !near(g.Ratio.Median, 3) {
		t.Errorf("p50 row %+v", g)
	}
	// Rivet's share is known in round 2 only, where the floor's is 0.
	if g := byName["GET vs machine floor: requests over 5 ms"]; g.Figure == nil || g.Figure.N != 1 || !near(g.Figure.Median, 3) ||
		g.Base == nil || g.Base.N != 2 || !near(g.Base.Median, 0.25) || g.Ratio != nil {
		t.Errorf("over 5 ms row %+v", g)
	}
	if p := byName["GET p99, wrk c16, rivet dev"]; !strings.Contains(p.Note, "machine floor") || !strings.Contains(p.Note, "p99 5.00 (4.00–6.00) ms") {
		t.Errorf("p99 goal note %q", p.Note)
	}
	out := formatGoals(GoalsReport{Runs: floorRuns(), Goals: computeGoals(GoalsReport{Runs: floorRuns()})})
	for _, want := range []string{"round 1, " + targetFloor, "GET vs machine floor: p99", "over 5 ms 3.00%"} {
		if !strings.Contains(out, want) {
			t.Errorf("goals text lacks %q:\n%s", want, out)
		}
	}

	// Without the floor (--floor=false, or an older report) no such row.
	for _, g := range computeGoals(GoalsReport{Runs: goalsRuns()}) {
		if strings.Contains(g.Name, "machine floor") || strings.Contains(g.Note, "machine floor") {
			t.Errorf("row %+v without a floor run", g)
		}
	}
}

// over_5ms_pct is new: absent when not measured (the reports before it
// read the same), present when 0.
func TestOver5msJSON(t *testing.T) {
	zero := 0.0
	for r, want := range map[*Result]string{{Workload: "wrk-get"}: "", {Workload: "wrk-get", Over5msPct: &zero}: `"over_5ms_pct":0`} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "over_5ms_pct"); got != (want != "") || !strings.Contains(string(b), want) {
			t.Errorf("%+v: JSON %s", r, b)
		}
	}
}
