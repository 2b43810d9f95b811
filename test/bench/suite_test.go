package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/config"
)

// The services' configuration is one the rivet configuration loader
// accepts (an unknown or misspelt option would stop the services), with
// the values the suite chose.
func TestServiceConfigLoads(t *testing.T) {
	for name, dc := range map[string]deployConfig{
		"defaults":  {dbURL: "postgresql://u@127.0.0.1:5432/rivet_bench_x?sslmode=disable", pluginDir: "/tmp/bin", apiPort: 16385, rpcPort: 18089},
		"powersync": {dbURL: "postgresql://u@127.0.0.1/x", pluginDir: "/tmp/bin", apiPort: 1, rpcPort: 2, syncInterval: 10 * time.Second, syncWorkers: 100},
	} {
		t.Run(name, func(t *testing.T) {
			text := serviceConfig(dc)
			if n := strings.Count(text, "[conductor]"); n != 1 {
				t.Fatalf("[conductor] appears %d times:\n%s", n, text)
			}
			path := t.TempDir() + "/rivet.conf"
			if err := writeFile(path, text); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load([]string{path}, nil)
			if err != nil {
				t.Fatalf("config.Load: %v\n%s", err, text)
			}
			if cfg.API.Port != dc.apiPort || cfg.JSONRPC.Port != dc.rpcPort || cfg.API.HostIP != "127.0.0.1" || cfg.JSONRPC.HostIP != "127.0.0.1" {
				t.Errorf("ports/hosts: api %s:%d, json_rpc %s:%d", cfg.API.HostIP, cfg.API.Port, cfg.JSONRPC.HostIP, cfg.JSONRPC.Port)
			}
			if cfg.Database.Connection != dc.dbURL || cfg.Conductor.PluginDir != dc.pluginDir || cfg.Default.AuthStrategy != "noauth" {
				t.Errorf("connection %q, plugin_dir %q, auth %q", cfg.Database.Connection, cfg.Conductor.PluginDir, cfg.Default.AuthStrategy)
			}
			if d := cmp.Diff([]string{"fake-hardware"}, cfg.Conductor.EnabledHardwareTypes); d != "" {
				t.Errorf("enabled_hardware_types (-want +got):\n%s", d)
			}
			wantInterval, wantWorkers := 60*time.Second, 8 // rivet's defaults
			if dc.syncInterval > 0 {
				wantInterval, wantWorkers = dc.syncInterval, dc.syncWorkers
			}
			if cfg.Conductor.SyncPowerStateInterval != wantInterval || cfg.Conductor.SyncPowerStateWorkers != wantWorkers {
				t.Errorf("power sync every %v with %d workers, want %v with %d", cfg.Conductor.SyncPowerStateInterval,
					cfg.Conductor.SyncPowerStateWorkers, wantInterval, wantWorkers)
			}
		})
	}
}

func TestRenderConfig(t *testing.T) {
	got := renderConfig([]option{{"DEFAULT", "host", "h"}, {"DEFAULT", "skipped", ""}, {"api", "port", "1"}, {"api", "host_ip", "::1"}})
	want := "[DEFAULT]\nhost = h\n\n[api]\nport = 1\nhost_ip = ::1\n"
	if got != want {
		t.Errorf("renderConfig:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\trivet\nVmPeak:\t 1300000 kB\nVmHWM:\t   51234 kB\nVmRSS:\t   40960 kB\n" +
		"RssAnon:\t   10240 kB\nRssFile:\t   30720 kB\nRssShmem:\t       0 kB\nThreads:\t9\n"
	m, err := parseStatus(status)
	if err != nil {
		t.Fatal(err)
	}
	if m != (Memory{RSSKiB: 40960, PeakKiB: 51234, AnonKiB: 10240, FileKiB: 30720}) {
		t.Errorf("parseStatus = %+v", m)
	}
	if MiB(m.RSSKiB) != "40.0" {
		t.Errorf("MiB(40960) = %s", MiB(m.RSSKiB))
	}
	line := memoryLine(Memory{RSSKiB: 2048, AnonKiB: 1024, FileKiB: 1024, PssKiB: 1536}, Memory{RSSKiB: 1024, PssKiB: 512})
	if want := "api rss 2.0 (anon 1.0, file 1.0), pss 1.5; conductor rss 1.0 (anon 0.0, file 0.0), pss 0.5; together rss 3.0, pss 2.0"; !strings.Contains(line, want) {
		t.Errorf("memoryLine = %q, want it to hold %q", line, want)
	}
	// This process: every figure is there on Linux.
	if m, err := memoryOf(os.Getpid()); err != nil || m.RSSKiB <= 0 || m.AnonKiB <= 0 || m.FileKiB <= 0 || m.PssKiB <= 0 {
		t.Errorf("memoryOf(self) = %+v, %v", m, err)
	}
	for _, bad := range []string{"Name:\tkthreadd\n", "VmRSS:\t 12 MB\nVmHWM:\t 12 kB\n", "VmRSS:\t x kB\nVmHWM:\t 1 kB\n"} {
		if _, err := parseStatus(bad); err == nil {
			t.Errorf("parseStatus(%q) succeeded", bad)
		}
	}
	if got := (Memory{1, 2, 3, 4, 5}).Add(Memory{10, 20, 30, 40, 50}); got != (Memory{11, 22, 33, 44, 55}) {
		t.Errorf("Add = %+v", got)
	}
}

func TestParentOf(t *testing.T) {
	for stat, want := range map[string]int{
		"4242 (rivet) S 4241 4242 4100 0 -1":                 4241,
		"4243 (rivet-driver-fa) S 4242 4242 4100 0 -1":       4242,
		"17 (a (weird) name) R 1 17 17 0 -1 4194560 1 0 0 0": 1,
	} {
		got, err := parentOf(stat)
		if err != nil || got != want {
			t.Errorf("parentOf(%q) = %d, %v; want %d", stat, got, err, want)
		}
	}
	if _, err := parentOf("garbage"); err == nil {
		t.Error("parentOf(garbage) succeeded")
	}
}

// A conductor log as slog's JSON handler writes it: cycle lines among
// others, durations in nanoseconds.
const conductorLog = `{"time":"t","level":"INFO","msg":"conductor started","service":"conductor"}
{"time":"t","level":"INFO","msg":"power-state sync cycle done","periodic":"power_sync","stats":{"duration":2000000,"nodes":0,"probed":0,"changed":0,"failed":0,"skipped":0,"skipped_breaker":0,"unstarted":0,"workers":0,"bound":0,"ratio":0}}
not json power-state sync cycle done
{"time":"t","level":"INFO","msg":"power-state sync cycle done","stats":{"duration":10500000000,"nodes":1000,"probed":1000,"changed":1000,"failed":0,"skipped":0,"workers":10,"bound":10100000000,"ratio":1.04}}
{"time":"t","level":"INFO","msg":"power-state sync cycle done","stats":{"duration":10200000000,"nodes":1000,"probed":1000,"changed":0,"failed":0,"skipped":0,"workers":10,"bound":10050000000,"ratio":1.015}}
{"time":"t","level":"WARN","msg":"power-state sync cycle overran its interval; starting the next at once","duration":10200000000}
{"time":"t","level":"INFO","msg":"power-state sync cycle done","stats":{"duration":10600000000,"nodes":1000,"probed":1000,"changed":0,"failed":0,"skipped":0,"workers":10,"bound":10100000000,"ratio":1.05}}
{"time":"t","level":"INFO","msg":"power-state sync cycle done","stats":{"duration":10400000000,"nodes":1000,"probed":1000,"changed":0,"failed":0,"skipped":0,"workers":10,"bound":10100000000,"ratio":1.03}}
`

func TestParseCyclesAndSummarize(t *testing.T) {
	cycles := parseCycles(conductorLog)
	if len(cycles) != 5 {
		t.Fatalf("parsed %d cycles, want 5: %+v", len(cycles), cycles)
	}
	if c := cycles[1]; c.Duration != 10500*time.Millisecond || c.Nodes != 1000 || c.Changed != 1000 || c.Workers != 10 || c.DurationS != 10.5 {
		t.Errorf("second cycle %+v", c)
	}
	// 1000 nodes × 100 ms / 10 workers = 10 s; the steady cycles (no
	// change) are the last three: 10.2, 10.6, 10.4 s, median 10.4.
	r, done := summarize(cycles, 1000, 10, 100*time.Millisecond, 3)
	if !done || r.Steady != 3 || r.IdealS != 10 || r.CycleS != 10.4 || r.Ratio != 1.04 || r.BoundRatio != 1.03 {
		t.Errorf("summarize = done %v, %+v", done, r)
	}
	if _, done := summarize(cycles, 1000, 10, 100*time.Millisecond, 4); done {
		t.Error("4 steady cycles reported done with 3 logged")
	}
	if _, done := summarize(cycles, 2000, 10, 100*time.Millisecond, 1); done {
		t.Error("cycles over 1000 nodes counted for 2000")
	}
	if !strings.Contains(r.String(), "ratio 1.040") {
		t.Errorf("String() = %s", r)
	}
}

func TestSyncInterval(t *testing.T) {
	for _, tc := range []struct {
		nodes, workers int
		latency, want  time.Duration
	}{
		{10000, 100, 100 * time.Millisecond, 10 * time.Second},
		{10000, 8, 100 * time.Millisecond, 125 * time.Second},
		{300, 30, 100 * time.Millisecond, 2 * time.Second}, // at least 2 s
	} {
		if got := syncInterval(tc.nodes, tc.workers, tc.latency); got != tc.want {
			t.Errorf("syncInterval(%d, %d, %v) = %v, want %v", tc.nodes, tc.workers, tc.latency, got, tc.want)
		}
	}
}

func TestParseSuiteFlags(t *testing.T) {
	o, err := parseSuiteFlags([]string{"--scales", "1000, 10000", "--workloads", "get,powersync", "--powersync-workers", "8,100", "--json"}, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{1000, 10000}, o.scales); d != "" {
		t.Errorf("scales: %s", d)
	}
	if d := cmp.Diff([]int{8, 100}, o.psWorkers); d != "" {
		t.Errorf("powersync workers: %s", d)
	}
	if d := cmp.Diff([]string{"get", "powersync"}, o.workloads); d != "" || !o.jsonOut {
		t.Errorf("workloads %v, json %v", o.workloads, o.jsonOut)
	}
	for _, bad := range [][]string{{"--scales", "0"}, {"--scales", "1k"}, {"--workloads", "enrol"}, {"--powersync-workers", "-1"}, {"extra"}} {
		if _, err := parseSuiteFlags(bad, &strings.Builder{}); err == nil {
			t.Errorf("parseSuiteFlags(%q) succeeded", bad)
		}
	}
}

func TestFormatReport(t *testing.T) {
	rep := Report{Machine: "m, 2 cores", Commit: "abc", Date: "d", LoadStart: "0.1 0.2 0.3", LoadEnd: "1 2 3",
		Scales: []ScaleResult{{Nodes: 1000, Enroll: "api",
			Results: []Result{
				{Workload: "enroll", Requests: 1000, Rate: 2000.5},
				{Workload: "get", Requests: 50000, Rate: 5000, P50ms: 2.5, P99ms: 9.75},
				{Workload: "list-1000", Requests: 100, Rate: 10.25, Errors: 1},
				{Workload: "power-200", Requests: 200, ElapsedS: 1.5},
			},
			API: Memory{RSSKiB: 30 * 1024, PeakKiB: 40 * 1024}, Conductor: Memory{RSSKiB: 20 * 1024, PeakKiB: 25 * 1024}}},
	}
	out := formatReport(rep)
	for _, want := range []string{"load (1/5/15 min): 0.1 0.2 0.3 at start, 1 2 3 at end", "2000.5", "5000.0", "2.50", "9.75", "10.2", "1.50",
		"30.0 (40.0)", "20.0 (25.0)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// Workloads not run show as "-"; errors are summed.
	row := strings.Split(out, "\n")[4]
	if f := strings.Fields(row); len(f) < 13 || f[6] != "-" || f[8] != "-" || f[len(f)-1] != "1" {
		t.Errorf("row %q: want detail and lifecycle as -, 1 error", row)
	}
}

func TestCountListed(t *testing.T) {
	for body, want := range map[string]int{
		`{"nodes": [{"uuid": "a", "links": [{"href": "x"}]}, {"uuid":"b","name":"\"uuid\":"}], "next": "y"}`: 2,
		`{"nodes": []}`: 0,
	} {
		if got, err := countListed([]byte(body)); err != nil || got != want {
			t.Errorf("countListed(%s) = %d, %v; want %d", body, got, err, want)
		}
	}
	for _, bad := range []string{`{"nodes": [{"uuid": "a"}`, `[{"uuid": "a"}]`, `{"ports": []}`} {
		if _, err := countListed([]byte(bad)); err == nil {
			t.Errorf("countListed(%s) accepted it", bad)
		}
	}
}

// TestParseStatCPU: utime and stime are fields 14 and 15, counted after the
// command name, which may hold spaces and parentheses.
func TestParseStatCPU(t *testing.T) {
	line := "4242 (rivet (api) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 100 2000000 5000 18446744073709551615"
	got, ok := parseStatCPU(line)
	if !ok || got != 3250*time.Millisecond {
		t.Fatalf("parseStatCPU = %v, %v; want 3.25s", got, ok)
	}
	for _, bad := range []string{"", "4242 rivet S 1", "4242 (rivet) S 1 2 3", "4242 (rivet) S 1 4242 4242 0 -1 4194560 1234 0 0 0 x 75"} {
		if _, ok := parseStatCPU(bad); ok {
			t.Errorf("parseStatCPU(%q) accepted", bad)
		}
	}
	if d, ok := procCPU(os.Getpid()); !ok || d < 0 {
		t.Errorf("procCPU(self) = %v, %v", d, ok)
	}
}
