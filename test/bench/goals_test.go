package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// wrk 4.1's report with --latency, as it printed it against rivet dev.
const wrkReport = `Running 10s test @ http://127.0.0.1:40123/v1/nodes/0b6f1c0e-0000-4000-8000-000000000001
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.93ms    1.20ms  31.07ms   90.11%
    Req/Sec     4.29k   512.33     5.38k    69.50%
  Latency Distribution
     50%    1.66ms
     75%    2.21ms
     90%    3.02ms
     99%  612.00us
  85401 requests in 10.01s, 148.20MB read
Requests/sec:   8531.47
Transfer/sec:     14.81MB
`

// And against a slow server: seconds, failed requests and socket errors.
const wrkSlowReport = `Running 10s test @ http://127.0.0.1:6385/v1/nodes/detail?limit=100
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency      1.52s   300.10ms   2.11s    70.00%
    Req/Sec     10.00      5.00    20.00     60.00%
  Latency Distribution
     50%    1.50s 
     75%    1.70s 
     90%    1.90s 
     99%    2.10s 
  320 requests in 1.00m, 3.10MB read
  Socket errors: connect 0, read 1, write 0, timeout 2
  Non-2xx or 3xx responses: 4
Requests/sec:      5.33
Transfer/sec:     52.90KB
`

func TestParseWrk(t *testing.T) {
	got, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkOutput{Requests: 85401, Duration: 10010 * time.Millisecond, Rate: 8531.47, P50: 1660 * time.Microsecond, P99: 612 * time.Microsecond}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("parseWrk (-want +got):\n%s", d)
	}
	got, err = parseWrk(wrkSlowReport)
	if err != nil {
		t.Fatal(err)
	}
	want = wrkOutput{Requests: 320, Duration: time.Minute, Rate: 5.33, P50: 1500 * time.Millisecond, P99: 2100 * time.Millisecond, Non2xx: 4, SocketErrors: 3}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("parseWrk, slow (-want +got):\n%s", d)
	}
	// The share over 5 ms, when wrk-get's done hook printed it.
	got, err = parseWrk(wrkReport + "Over 5ms: 1.2500%\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.Over5msPct == nil || *got.Over5msPct != 1.25 {
		t.Errorf("Over5msPct = %v, want 1.25", got.Over5msPct)
	}
	for _, bad := range []string{"Over 5ms: many%", "Over 5ms: 101.0000%", "Over 5ms: -1%"} {
		if _, err := parseWrk(wrkReport + bad + "\n"); err == nil {
			t.Errorf("parseWrk accepted %q", bad)
		}
	}
	// Without --latency there are no percentiles; an error message is not a report.
	noLatency := strings.Replace(wrkReport, "     50%    1.66ms\n", "", 1)
	for _, bad := range []string{"", "unable to connect to 127.0.0.1:1 Connection refused\n", noLatency,
		strings.Replace(wrkReport, "1.66ms", "1.66parsecs", 1)} {
		if _, err := parseWrk(bad); err == nil {
			t.Errorf("parseWrk accepted %q", bad)
		}
	}
}

func TestWrkDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"612.00us": 612 * time.Microsecond, "1.66ms": 1660 * time.Microsecond,
		"2.10s": 2100 * time.Millisecond, "1.00m": time.Minute, "1.50h": 90 * time.Minute} {
		if got, err := wrkDuration(in); err != nil || got != want {
			t.Errorf("wrkDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ms", "1.5", "-1ms", "1.5d"} {
		if _, err := wrkDuration(bad); err == nil {
			t.Errorf("wrkDuration(%q) accepted", bad)
		}
	}
}

func TestWrkGetScript(t *testing.T) {
	s := wrkGetScript([]string{"u-1", "u-2"})
	for _, want := range []string{`"u-1",`, `"u-2",`, "function request()", "math.random(#reqs)", `wrk.format("GET", "/v1/nodes/" .. u)`, `thread:set("id", threads)`,
		"function done(summary, latency, requests)", `io.write(string.format("Over 5ms: %.4f%%\n", 100 - lo))`} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}

// Without wrk the error names the package to install.
func TestWrkMissing(t *testing.T) {
	t.Setenv("RIVET_BENCH_WRK", "")
	t.Setenv("PATH", t.TempDir())
	if _, err := wrkBin(); err == nil || !strings.Contains(err.Error(), "apt-get install -y wrk") {
		t.Errorf("wrkBin without wrk: %v", err)
	}
}

func TestParseSuiteFlagsGoals(t *testing.T) {
	o, err := parseSuiteFlags([]string{"--goals", "--ironic", "--rounds", "5", "--nodes", "200", "--enroll-nodes", "3000", "--memory-goal", "--memory-nodes", "50000"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if !o.goals || !o.ironic || o.rounds != 5 || o.nodes != 200 || o.enrollNodes != 3000 || !o.memoryGoal || o.memoryNodes != 50000 || o.ironicPython != "/usr/bin/python3" {
		t.Errorf("options %+v", o)
	}
	o, err = parseSuiteFlags([]string{"--goals"}, &strings.Builder{})
	if err != nil || o.rounds != 3 || o.nodes != 1000 || o.enrollNodes != 5000 || o.ironic || o.memoryGoal || !o.floor {
		t.Errorf("defaults %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--ironic"}, {"--rounds", "2"}, {"--goals", "--rounds", "0"}, {"--goals", "--nodes", "99"},
		{"--goals", "--enroll-nodes", "0"}, {"--memory-goal"}, {"--floor=false"}} {
		if _, err := parseSuiteFlags(bad, &strings.Builder{}); err == nil {
			t.Errorf("parseSuiteFlags(%q) succeeded", bad)
		}
	}
	if err := func() error {
		_, err := parseSuiteFlags([]string{"--workloads", "enroll,wrk-get,wrk-detail"}, &strings.Builder{})
		return err
	}(); err != nil {
		t.Errorf("the wrk workloads: %v", err)
	}
}

func TestStatOf(t *testing.T) {
	if statOf(nil) != nil {
		t.Error("statOf(nil) is not nil")
	}
	st := statOf([]float64{3, 1, 2, 10})
	if d := cmp.Diff(&Stat{Median: 2.5, Min: 1, Max: 10, N: 4}, st); d != "" {
		t.Errorf("statOf (-want +got):\n%s", d)
	}
	if got := st.String(); got != "2.50 (1.00–10.0)" {
		t.Errorf("String = %q", got)
	}
	if got := statOf([]float64{1234.4}).String(); got != "1234" {
		t.Errorf("one round: %q", got)
	}
}

// goalsRuns are two rounds of every target: rivet dev 40× and 50× Ironic's
// GET rate, 20× and 40× its detail rate; split enroll 0.75× and 0.85×
// all-in-one's.
func goalsRuns() []TargetRun {
	var runs []TargetRun
	for round, f := range []struct{ devGet, irnGet, devDetail, irnDetail, split, aio, p99 float64 }{
		{8000, 200, 600, 30, 3000, 4000, 4.5}, {10000, 200, 800, 20, 3400, 4000, 6},
	} {
		runs = append(runs,
			TargetRun{Target: targetDev, Round: round + 1, Results: []Result{{Workload: "enroll", Rate: 1},
				{Workload: "wrk-get", Rate: f.devGet, P99ms: f.p99, ServerCPUus: 100}, {Workload: "wrk-detail-100", Rate: f.devDetail, ServerCPUus: 2000}}},
			TargetRun{Target: targetIronic, Round: round + 1, Results: []Result{{Workload: "enroll", Rate: 1},
				{Workload: "wrk-get", Rate: f.irnGet, P99ms: 150, ServerCPUus: 9000}, {Workload: "wrk-detail-100", Rate: f.irnDetail, ServerCPUus: 60000}}},
			TargetRun{Target: targetSplit, Round: round + 1, Results: []Result{{Workload: "enroll", Rate: f.split, ServerCPUus: 500}}},
			TargetRun{Target: targetAllInOne, Round: round + 1, Results: []Result{{Workload: "enroll", Rate: f.aio, ServerCPUus: 400}}},
		)
	}
	return runs
}

func TestComputeGoals(t *testing.T) {
	rep := GoalsReport{Rounds: 2, Nodes: 1000, EnrollNodes: 5000, Runs: goalsRuns()}
	goals := computeGoals(rep)
	byName := map[string]Goal{}
	for _, g := range goals {
		byName[strings.SplitN(g.Name, ",", 2)[0]] = g
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	get := byName["GET /v1/nodes/{uuid}"]
	if get.Ratio == nil || !near(get.Ratio.Median, 45) || !near(get.Ratio.Min, 40) || !near(get.Ratio.Max, 50) || get.Met != "met" ||
		!near(get.Figure.Median, 9000) || !near(get.Base.Median, 200) {
		t.Errorf("GET goal %+v ratio %+v", get, get.Ratio)
	}
	if p := byName["GET p99"]; p.Figure == nil || !near(p.Figure.Median, 5.25) || p.Met != "not met" {
		t.Errorf("p99 goal %+v", p)
	}
	if d := byName["GET /v1/nodes/detail?limit=100"]; d.Ratio == nil || !near(d.Ratio.Median, 30) || d.Met != "met" {
		t.Errorf("detail goal %+v", d)
	}
	if c := byName["wrk-get server CPU per request (Ironic ÷ Rivet)"]; c.Ratio == nil || !near(c.Ratio.Median, 90) || c.Met != "-" {
		t.Errorf("GET CPU row %+v", c)
	}
	if e := byName["enroll 5000 nodes"]; e.Ratio == nil || !near(e.Ratio.Median, 0.8) || e.Met != "met" || e.Baseline != "all-in-one" {
		t.Errorf("enroll goal %+v", e)
	}
	if m := byName["conductor RSS at 100"]; m.Met != "-" || !strings.Contains(m.Note, "--memory-goal") {
		t.Errorf("memory goal without --memory-goal: %+v", m)
	}
	if a := byName["agent deploy"]; a.Met != "-" || !strings.Contains(a.Note, "TestAgentDeployScale") {
		t.Errorf("agent row %+v", a)
	}

	// Without Ironic the ratios are unknown, not failed.
	var noIronic []TargetRun
	for _, r := range goalsRuns() {
		if r.Target != targetIronic {
			noIronic = append(noIronic, r)
		}
	}
	for _, g := range computeGoals(GoalsReport{Runs: noIronic}) {
		if strings.HasPrefix(g.Name, "GET /v1/nodes/{uuid}") && (g.Ratio != nil || g.Met != "-" || !strings.Contains(g.Note, "--ironic")) {
			t.Errorf("GET goal without Ironic: %+v", g)
		}
	}

	// The memory goal from a powersync run.
	rep.PowerSync = &PowerSyncResult{Nodes: 100000, BoundRatio: 1.05, CycleS: 10.5, IdealS: 10, Ratio: 1.05,
		Conductor: Memory{RSSKiB: 70 * 1024, PeakKiB: 90 * 1024}}
	var mem []Goal
	for _, g := range computeGoals(rep) {
		if strings.Contains(g.Name, "100000 nodes") {
			mem = append(mem, g)
		}
	}
	if len(mem) != 2 || mem[0].Met != "not met" || !near(mem[0].Figure.Median, 70) || mem[1].Met != "met" {
		t.Errorf("memory goals %+v", mem)
	}
}

func TestFormatGoals(t *testing.T) {
	rep := GoalsReport{Machine: "vm, 2 cores", CPU: "AMD EPYC", Cores: 2, Commit: "abc", Date: "d", LoadStart: "1 2 3", LoadEnd: "4 5 6",
		Rounds: 2, Nodes: 1000, EnrollNodes: 5000, Runs: goalsRuns()}
	rep.Goals = computeGoals(rep)
	out := formatGoals(rep)
	for _, want := range []string{"AMD EPYC, 2 cores", "load (1/5/15 min): 1 2 3 at start, 4 5 6 at end", "round 2, Ironic 21.4",
		"9000 (8000–10000)", "45.0 (40.0–50.0)", "≥ 40× Ironic", "not met", "0.80 (0.75–0.85)", "TestAgentDeployScale"} {
		if !strings.Contains(out, want) {
			t.Errorf("goals text lacks %q:\n%s", want, out)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"goals":[`, `"ratio":{"median":45`, `"server_cpu_us_per_req":9000`, `"cpu":"AMD EPYC"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}

func TestIronicConfig(t *testing.T) {
	u, err := sqlalchemyURL("postgresql://postgres@127.0.0.1:5432/rivet_bench_x?sslmode=disable")
	if err != nil || u != "postgresql+psycopg2://postgres@127.0.0.1:5432/rivet_bench_x?sslmode=disable" {
		t.Fatalf("sqlalchemyURL = %q, %v", u, err)
	}
	c := ironicConfig(u, 16385, 18089)
	for _, want := range []string{"[DEFAULT]\nhost = 127.0.0.1\nauth_strategy = noauth\nrpc_transport = json-rpc\nenabled_hardware_types = fake-hardware\n",
		"enabled_deploy_interfaces = fake\n", "enabled_network_interfaces = noop\n",
		"[api]\nhost_ip = 127.0.0.1\nport = 16385\napi_workers = 2\n", "[database]\nconnection = " + u + "\n",
		"[dhcp]\ndhcp_provider = none\n", "[json_rpc]\nauth_strategy = noauth\nhost_ip = 127.0.0.1\nport = 18089\n"} {
		if !strings.Contains(c, want) {
			t.Errorf("ironic.conf lacks %q:\n%s", want, c)
		}
	}
	if n := strings.Count(c, "[DEFAULT]"); n != 1 {
		t.Errorf("[DEFAULT] %d times:\n%s", n, c)
	}
}

// cpuInfo reads this machine's /proc/cpuinfo (or says "unknown").
func TestCPUInfo(t *testing.T) {
	model, cores := cpuInfo()
	if model == "" || cores < 0 {
		t.Errorf("cpuInfo = %q, %d", model, cores)
	}
}
