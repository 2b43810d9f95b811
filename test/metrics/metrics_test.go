package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/metrics"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/test/stacktest"
)

var fakeBin, redfishBin string

// TestMain builds the fake and redfish plugin binaries once.
func TestMain(m *testing.M) { stacktest.MainWithPlugins(m, &fakeBin, &redfishBin) }

const bmcPassword = "metrics-bmc-pw"

// stack is an API over a conductor whose drivers are plugin processes,
// each service's metrics on a listener of its own.
type stack struct {
	t                    *testing.T
	url                  string
	apiMetrics, cMetrics string // http://host:port/metrics
	bmc                  string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	_, bmc := stacktest.StartBMC(t, sim.Options{Systems: 2, Password: bmcPassword})

	creg, areg := prometheus.NewRegistry(), prometheus.NewRegistry()
	cm, err := conductor.NewMetrics(creg)
	if err != nil {
		t.Fatal(err)
	}
	mgr := stacktest.StartPlugins(t, host.Config{WatchInterval: -1, Observer: cm, Logger: slog.New(slog.DiscardHandler),
		BuiltIn: map[string]host.Command{"fake": {Path: fakeBin}, "redfish": {Path: redfishBin}}})

	pinner := release.NewPinner(release.Default(), release.Pin{})
	dbh, store := stacktest.SQLiteStore(t, pinner, true)
	cfg := stacktest.ConductorConfig("cond-1")
	cfg.AutomatedClean, cfg.CheckInterval, cfg.PowerSyncMaxRetries = false, time.Hour, 1
	cfg.PowerSync.Interval, cfg.PowerSync.Spread, cfg.PowerSync.Breaker.Threshold = 300*time.Millisecond, 0, 0
	cfg.Sensors = conductor.SensorConfig{Enabled: true, Interval: 300 * time.Millisecond, Workers: 2, Timeout: 10 * time.Second}
	svc := stacktest.StartConductor(t, cfg, conductor.Deps{Store: store, Pinner: pinner, Metrics: cm,
		Drivers: conductor.PluginDrivers{Manager: mgr, Enabled: []string{"fake-hardware", "redfish"}}})
	deps := stacktest.APIDeps(dbh, store, pinner, svc, cfg.HeartbeatTimeout)
	deps.Metrics = areg
	srv := stacktest.Serve(t, deps)
	s := &stack{t: t, url: srv.URL, bmc: bmc.URL}
	for _, l := range []struct {
		option string
		reg    *prometheus.Registry
		url    *string
	}{{"[metrics] api_listen", areg, &s.apiMetrics}, {"[metrics] conductor_listen", creg, &s.cMetrics}} {
		ms, err := metrics.Listen(l.option, "127.0.0.1:0", false, l.reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms.Serve()
		t.Cleanup(func() { _ = ms.Close(context.Background()) })
		*l.url = "http://" + ms.Addr() + "/metrics"
	}
	return s
}

// call sends one request at microversion 1.26.
func (s *stack) call(method, path, body string, want int) map[string]any {
	s.t.Helper()
	status, data := stacktest.Do(s.t, s.url, "1.26", method, path, body)
	if status != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, data)
	}
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

// waitNode polls the node until cond holds (60 s at most).
func (s *stack) waitNode(name, what string, cond func(n map[string]any) bool) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := s.call("GET", "/v1/nodes/"+name, "", 200)
		if cond(n) && n["reservation"] == nil {
			return n
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("node %s never reached %s: %v", name, what, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *stack) provision(name, target, want string) {
	s.t.Helper()
	s.call("PUT", "/v1/nodes/"+name+"/states/provision", `{"target":"`+target+`"}`, 202)
	s.waitNode(name, want, func(n map[string]any) bool { return n["provision_state"] == want && n["target_provision_state"] == nil })
}

func (s *stack) power(name, target string) {
	s.t.Helper()
	s.call("PUT", "/v1/nodes/"+name+"/states/power", `{"target":"`+target+`"}`, 202)
	s.waitNode(name, target, func(n map[string]any) bool { return n["power_state"] == target && n["target_power_state"] == nil })
}

// scrape fetches a metrics listener, unauthenticated.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// series finds a sample line of name whose labels include every pair of
// labels (k="v"); it returns the line's value, or -1 if none matches.
func series(body, name string, labels ...string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !strings.Contains(line, labels[i]+`="`+labels[i+1]+`"`) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &v); err == nil {
			return v
		}
	}
	return -1
}

// families lists the families a scrape declares (# TYPE lines).
func families(body string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = f[3]
		}
	}
	return out
}

// drive runs the scenario every test here scrapes after: a fake node
// deployed and powered off and on, a redfish node powered on and off
// against the simulator (its sensors read), and a redfish node with a
// wrong password whose power action and power sync fail. It returns the
// two scrapes once the conductor has seen all of it.
func drive(t *testing.T) (s *stack, apiBody, condBody, goodUUID string) {
	s = newStack(t)
	s.call("POST", "/v1/nodes", `{"name":"fk1","driver":"fake-hardware"}`, 201)
	s.provision("fk1", "manage", "manageable")
	s.provision("fk1", "provide", "available")
	s.provision("fk1", "active", "active")
	s.power("fk1", "power off")
	s.power("fk1", "power on")

	rf := func(name, system, pw string) string {
		return fmt.Sprintf(`{"name":%q,"driver":"redfish","driver_info":{"redfish_address":%q,"redfish_system_id":"/redfish/v1/Systems/%s","redfish_username":%q,"redfish_password":%q}}`,
			name, s.bmc, system, sim.DefaultUsername, pw)
	}
	good := s.call("POST", "/v1/nodes", rf("rf1", "node-0", bmcPassword), 201)
	s.power("rf1", "power on")
	s.power("rf1", "power off")
	s.call("POST", "/v1/nodes", rf("rf-bad", "node-1", "wrong-password"), 201)
	s.call("PUT", "/v1/nodes/rf-bad/states/power", `{"target":"power on"}`, 202)
	s.waitNode("rf-bad", "a failed power action", func(n map[string]any) bool { return n["last_error"] != nil && n["target_power_state"] == nil })

	goodUUID = good["uuid"].(string)
	deadline := time.Now().Add(90 * time.Second)
	for {
		condBody = scrape(t, s.cMetrics)
		if series(condBody, "baremetal_temperature_celsius", "node_uuid", goodUUID) >= 0 &&
			series(condBody, "rivet_conductor_power_sync_failures_total") > 0 &&
			series(condBody, "rivet_conductor_power_sync_cycle_duration_seconds_count") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the conductor never read rf1's sensors and a failing power sync:\n%s", condBody)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s, scrape(t, s.apiMetrics), condBody, goodUUID
}

// TestMetricsListeners scrapes both services' listeners after the
// scenario and checks each family with the labels it is documented with.
func TestMetricsListeners(t *testing.T) {
	s, apiBody, c, rf1 := drive(t)
	checks := []struct {
		body, name string
		labels     []string
		atLeast    float64
	}{
		{apiBody, "rivet_api_requests_total", []string{"method", "PUT", "route", "PUT /v1/nodes/{node}/states/power", "status", "202"}, 5},
		{apiBody, "rivet_api_requests_total", []string{"method", "GET", "route", "GET /v1/nodes/{node}", "status", "200"}, 1},
		{apiBody, "rivet_api_request_duration_seconds_count", []string{"method", "PUT", "route", "PUT /v1/nodes/{node}/states/provision", "status", "202"}, 3},
		{c, "rivet_conductor_nodes", []string{"provision_state", "active", "power_state", "power on", "maintenance", "false"}, 1},
		{c, "rivet_conductor_nodes", []string{"provision_state", "enroll"}, 1},
		{c, "rivet_conductor_power_sync_cycle_duration_seconds_count", nil, 1},
		{c, "rivet_conductor_power_sync_failures_total", nil, 1},
		{c, "rivet_conductor_power_sync_changes_total", nil, 0},
		{c, "rivet_conductor_bmc_call_duration_seconds_count", []string{"driver", "redfish", "call", "get power state"}, 1},
		{c, "rivet_conductor_bmc_call_duration_seconds_count", []string{"driver", "redfish", "call", "power on"}, 1},
		{c, "rivet_conductor_bmc_call_duration_seconds_count", []string{"driver", "fake-hardware", "call", "deploy"}, 1},
		{c, "rivet_conductor_bmc_call_duration_seconds_count", []string{"driver", "redfish", "call", "get sensor data"}, 1},
		{c, "rivet_conductor_bmc_call_errors_total", []string{"driver", "redfish", "call", "get power state"}, 1},
		{c, "rivet_conductor_plugin_restarts_total", []string{"driver", "fake"}, 0},
		{c, "rivet_conductor_plugin_restarts_total", []string{"driver", "redfish"}, 0},
		{c, "rivet_conductor_lease_takeovers_total", nil, 0},
		{c, "rivet_conductor_provision_duration_seconds_count", []string{"operation", "deploy", "outcome", "success"}, 1},
		{c, "rivet_conductor_rpc_request_duration_seconds_count", []string{"method", "change_node_power_state", "outcome", "ok"}, 5},
		{c, "rivet_conductor_rpc_request_duration_seconds_count", []string{"method", "do_node_deploy", "outcome", "ok"}, 1},
		{c, "rivet_conductor_sensor_reads_total", []string{"outcome", "ok"}, 1},
		{c, "baremetal_temperature_celsius", []string{"node_uuid", rf1, "node_name", "rf1", "sensor_id", "CPU1 Temp"}, 1},
		{c, "baremetal_fan_speed_rpm", []string{"node_uuid", rf1, "node_name", "rf1", "sensor_id", "Fan1"}, 1},
		{c, "baremetal_fan_speed_percent", []string{"node_uuid", rf1, "node_name", "rf1", "sensor_id", "Fan3"}, 1},
		{c, "baremetal_power_watts", []string{"node_uuid", rf1, "node_name", "rf1", "sensor_id", "System Power Control"}, 0},
		{c, "baremetal_voltage_volts", []string{"node_uuid", rf1, "node_name", "rf1", "sensor_id", "12V Rail"}, 11},
		{c, "baremetal_sensor_status", []string{"node_uuid", rf1, "sensor_id", "CPU1 Temp", "type", "temperature"}, 0},
	}
	for _, ck := range checks {
		if v := series(ck.body, ck.name, ck.labels...); v < ck.atLeast {
			t.Errorf("%s%v = %v, want a series of at least %v", ck.name, ck.labels, v, ck.atLeast)
		}
	}
	// Sensor data is the only per-node label; rf-bad, whose BMC refuses
	// it, has none.
	for name := range families(c) {
		if strings.HasPrefix(name, "rivet_") && (strings.Contains(c, name+`{node`) || regexp.MustCompile(name+`\{[^}]*node_uuid=`).MatchString(c)) {
			t.Errorf("%s carries a per-node label", name)
		}
	}
	if strings.Contains(c, `node_name="rf-bad"`) {
		t.Error("rf-bad, whose BMC refuses its credentials, has sensor readings")
	}
	// The API's /metrics behind its auth still serves the same registry.
	req, _ := http.NewRequest("GET", s.url+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "rivet_api_requests_total") {
		t.Errorf("GET /metrics on the API: %d", resp.StatusCode)
	}
}

// metricName finds the rivet_ and baremetal_ metric names in a text.
var metricName = regexp.MustCompile(`\b(?:rivet|baremetal)_[a-z0-9_]+`)

// family maps a sample name to its family (a histogram's _bucket, _sum
// and _count to the histogram).
func family(name string, fams map[string]string) string {
	if _, ok := fams[name]; ok {
		return name
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok && fams[base] == "histogram" {
			return base
		}
	}
	return ""
}

// TestDashboardQueriesExportedMetrics: every panel query of the Grafana
// dashboard names only metrics the API and conductor export, and
// docs/admin/metrics.md documents exactly the rivet_/baremetal_ families
// they export.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	_, apiBody, condBody, _ := drive(t)
	fams := families(apiBody)
	for k, v := range families(condBody) {
		fams[k] = v
	}

	raw, err := os.ReadFile("../../docs/admin/grafana/rivet.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("rivet.json: %v", err)
	}
	queries := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			names := metricName.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no Rivet metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				queries++
				if family(n, fams) == "" {
					t.Errorf("panel %q: query %q names %s, which the services do not export", p.Title, tg.Expr, n)
				}
			}
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(string); ok {
			for _, n := range metricName.FindAllString(q, -1) {
				if family(n, fams) == "" {
					t.Errorf("variable %s: query %q names %s, which the services do not export", v.Name, q, n)
				}
			}
		}
	}
	if queries < 20 {
		t.Errorf("only %d metric references in the dashboard", queries)
	}

	doc, err := os.ReadFile("../../docs/admin/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	// The families are the first column of its tables; names elsewhere
	// (ironic-prometheus-exporter's) are prose.
	for _, m := range regexp.MustCompile("(?m)^\\| `((?:rivet|baremetal)_[a-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
		if _, ok := fams[m[1]]; !ok {
			t.Errorf("metrics.md documents %s, which the services do not export", m[1])
		}
	}
	var undocumented []string
	for name := range fams {
		if (strings.HasPrefix(name, "rivet_") || strings.HasPrefix(name, "baremetal_")) && !documented[name] {
			undocumented = append(undocumented, name)
		}
	}
	sort.Strings(undocumented)
	if len(undocumented) > 0 {
		t.Errorf("exported but not in docs/admin/metrics.md: %v", undocumented)
	}
}
