package logscan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/test/stacktest"
)

// The secrets of this test: nothing else contains them.
const (
	bmcPassword   = "Gr3yHeron-bmc-canary-5581"  // the simulator's real password
	wrongPassword = "Pl0ver-wrong-canary-2209"   // a node enrolled with a bad one
	fakePassword  = "Ki11deer-fake-canary-7340"  // fake-hardware's ipmi_password
	newPassword   = "Curl3w-patched-canary-6612" // set later through PATCH
)

var secrets = []string{bmcPassword, wrongPassword, fakePassword, newPassword}

// Credentials outside driver_info's password keys: in URLs (a BMC address,
// an image URL) and under secret-named keys of extra. They are masked on
// the way out but stored as given (only driver_info's secret keys are
// encrypted at rest), so the raw rows are not scanned for them.
const (
	addrURLPassword = "Sanderl1ng-addr-canary-4417" // userinfo of a redfish_address
	isoURLPassword  = "Dunl1n-iso-canary-9031"      // userinfo of instance_info boot_iso
	extraToken      = "Turnst0ne-extra-canary-3388" // extra's api_token
)

var urlSecrets = []string{addrURLPassword, isoURLPassword, extraToken}

var fakeBin, redfishBin string

// TestMain builds the fake and redfish plugin binaries once.
func TestMain(m *testing.M) { stacktest.MainWithPlugins(m, &fakeBin, &redfishBin) }

// sink collects everything that leaves Rivet towards a person: log lines
// and response bodies.
type sink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// stack is the API over a conductor whose drivers are plugin processes.
type stack struct {
	t     *testing.T
	url   string
	dbh   *db.DB
	out   *sink
	store *db.Store
}

func newStack(t *testing.T) *stack {
	t.Helper()
	out := &sink{}
	log, _, err := logging.New(out, "json", "debug") // the services' own logger, masking included
	if err != nil {
		t.Fatal(err)
	}

	mgr := stacktest.StartPlugins(t, host.Config{Logger: log.With("component", "plugins"), WatchInterval: -1,
		BuiltIn: map[string]host.Command{"fake": {Path: fakeBin}, "redfish": {Path: redfishBin}}})

	pinner := release.NewPinner(release.Default(), release.Pin{})
	dbh, store := stacktest.SQLiteStore(t, pinner, true)
	cfg := stacktest.ConductorConfig("cond-1")
	cfg.PowerSync.Interval, cfg.AutomatedClean, cfg.CheckInterval = 0, false, time.Hour
	svc := stacktest.StartConductor(t, cfg, conductor.Deps{Store: store, Pinner: pinner, Logger: log.With("component", "conductor"),
		Drivers: conductor.PluginDrivers{Manager: mgr, Enabled: []string{"fake-hardware", "redfish"}}})
	deps := stacktest.APIDeps(dbh, store, pinner, svc, cfg.HeartbeatTimeout)
	deps.Logger = log.With("component", "api")
	srv := stacktest.Serve(t, deps)
	return &stack{t: t, url: srv.URL, dbh: dbh, out: out, store: store}
}

// call sends one request at microversion 1.26; its response body goes to
// the sink whatever the status.
func (s *stack) call(method, path, body string, want int) map[string]any {
	s.t.Helper()
	status, data := stacktest.Do(s.t, s.url, "1.26", method, path, body)
	fmt.Fprintf(s.out, "HTTP %s %s -> %d %s\n", method, path, status, data)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	if status != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, data)
	}
	return out
}

// wait polls the node until it settles in state, or in fail when fail is
// not empty; it returns the node.
func (s *stack) wait(id, state string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := s.call("GET", "/v1/nodes/"+id, "", 200)
		if n["provision_state"] == state && n["target_provision_state"] == nil {
			return n
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("node %s never reached %s: %v (last_error %v)", id, state, n["provision_state"], n["last_error"])
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// lifecycle enrolls a node, takes it to active and back, and deletes it.
func (s *stack) lifecycle(name, create string) {
	s.t.Helper()
	n := s.call("POST", "/v1/nodes", create, 201)
	id := n["uuid"].(string)
	s.call("POST", "/v1/ports", fmt.Sprintf(`{"node_uuid":%q,"address":"52:54:00:00:%02x:aa"}`, id, len(name)), 201)
	s.call("GET", "/v1/nodes/"+name+"/validate", "", 200)
	for _, step := range []struct{ verb, state string }{{"manage", "manageable"}, {"provide", "available"}} {
		s.call("PUT", "/v1/nodes/"+name+"/states/provision", `{"target":"`+step.verb+`"}`, 202)
		s.wait(id, step.state)
	}
	s.call("PATCH", "/v1/nodes/"+name, `[{"op":"add","path":"/instance_info/boot_iso","value":"http://images.example.test/deploy.iso"}]`, 200)
	s.call("PUT", "/v1/nodes/"+name+"/states/provision", `{"target":"active"}`, 202)
	s.wait(id, "active")
	s.call("PUT", "/v1/nodes/"+name+"/states/power", `{"target":"power off"}`, 202)
	s.call("GET", "/v1/nodes/"+name+"/states", "", 200)
	s.call("GET", "/v1/nodes/detail", "", 200)
	s.call("PUT", "/v1/nodes/"+name+"/states/provision", `{"target":"deleted"}`, 202)
	s.wait(id, "available")
	s.call("DELETE", "/v1/nodes/"+name, "", 204)
}

// TestNoPasswordInLogsOrResponses runs the lifecycles, errors included,
// and scans every log line, response body, last_error and the raw rows.
func TestNoPasswordInLogsOrResponses(t *testing.T) {
	_, bmc := stacktest.StartBMC(t, sim.Options{Systems: 2, Password: bmcPassword, SystemVirtualMedia: true})
	s := newStack(t)

	redfishNode := func(name, system, password string) string {
		return fmt.Sprintf(`{"name":%q,"driver":"redfish","driver_info":{"redfish_address":%q,"redfish_system_id":"/redfish/v1/Systems/%s","redfish_username":%q,"redfish_password":%q}}`,
			name, bmc.URL, system, sim.DefaultUsername, password)
	}
	s.lifecycle("fake1", `{"name":"fake1","driver":"fake-hardware","driver_info":{"ipmi_password":"`+fakePassword+`","ipmi_username":"admin"}}`)
	s.lifecycle("rf1", redfishNode("rf1", "node-0", bmcPassword))

	// A wrong password: the BMC refuses, and the errors that reach the
	// API, the logs and last_error must not carry what was tried.
	bad := s.call("POST", "/v1/nodes", redfishNode("rf-bad", "node-1", wrongPassword), 201)
	s.call("GET", "/v1/nodes/rf-bad/validate", "", 200)
	s.call("PUT", "/v1/nodes/rf-bad/states/provision", `{"target":"manage"}`, 202)
	failed := s.wait(bad["uuid"].(string), "enroll")
	if failed["last_error"] == nil {
		t.Errorf("verifying rf-bad with a wrong password left no last_error")
	}
	s.call("PATCH", "/v1/nodes/rf-bad", `[{"op":"replace","path":"/driver_info/redfish_password","value":"`+newPassword+`"}]`, 200)
	s.call("PUT", "/v1/nodes/rf-bad/states/power", `{"target":"power on"}`, 202)
	time.Sleep(500 * time.Millisecond) // let the failing power action log and record its error
	after := s.call("GET", "/v1/nodes/rf-bad", "", 200)
	if di := after["driver_info"].(map[string]any); di["redfish_password"] != api.Masked {
		t.Errorf("driver_info password shown as %v", di["redfish_password"])
	}
	// Bad input echoing driver_info must not echo the password either.
	s.call("PATCH", "/v1/nodes/rf-bad", `[{"op":"replace","path":"/driver_info","value":"`+newPassword+`"}]`, 400)

	// Credentials inside URLs and under secret-named extra keys: a BMC
	// address with userinfo (the driver refuses it), an image URL with
	// userinfo the driver hands to the BMC, a token in extra.
	s.call("POST", "/v1/nodes", fmt.Sprintf(`{"name":"rf-url","driver":"redfish","driver_info":{"redfish_address":%q,`+
		`"redfish_system_id":"/redfish/v1/Systems/node-1","redfish_username":%q,"redfish_password":%q},"extra":{"api_token":%q}}`,
		strings.Replace(bmc.URL, "://", "://admin:"+addrURLPassword+"@", 1), sim.DefaultUsername, bmcPassword, extraToken), 201)
	s.call("GET", "/v1/nodes/rf-url/validate", "", 200)
	s.call("PUT", "/v1/nodes/rf-url/states/provision", `{"target":"manage"}`, 202)
	s.wait(s.call("GET", "/v1/nodes/rf-url", "", 200)["uuid"].(string), "enroll")
	s.call("PATCH", "/v1/nodes/rf-url", `[{"op":"replace","path":"/driver_info/redfish_address","value":"`+bmc.URL+`"},`+
		`{"op":"add","path":"/instance_info/boot_iso","value":"http://mirror:`+isoURLPassword+`@images.example.test/deploy.iso"}]`, 200)
	s.call("PUT", "/v1/nodes/rf-url/states/provision", `{"target":"manage"}`, 202)
	urlNode := s.wait(s.call("GET", "/v1/nodes/rf-url", "", 200)["uuid"].(string), "manageable")
	s.call("PUT", "/v1/nodes/rf-url/states/provision", `{"target":"provide"}`, 202)
	s.wait(urlNode["uuid"].(string), "available")
	s.call("PUT", "/v1/nodes/rf-url/states/provision", `{"target":"active"}`, 202)
	s.wait(urlNode["uuid"].(string), "active")
	s.call("GET", "/v1/nodes/detail", "", 200)
	s.call("GET", "/v1/nodes?fields=driver_info,instance_info,extra,last_error", "", 200)

	var lastErrors []string
	if err := s.dbh.Bun().NewSelect().Table(db.TableNodes).Column("last_error").Where("last_error IS NOT NULL").
		Scan(context.Background(), &lastErrors); err != nil {
		t.Fatal(err)
	}
	var rows []string
	if err := s.dbh.Bun().NewSelect().Table(db.TableNodes).Column("driver_info").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	captured := s.out.String()
	if !strings.Contains(captured, `"component":"plugins"`) || !strings.Contains(captured, `"component":"conductor"`) ||
		!strings.Contains(captured, `"component":"api"`) {
		t.Errorf("the scan missed a component's logs; captured:\n%s", captured)
	}
	for _, pw := range append(slices.Clone(secrets), urlSecrets...) {
		texts := map[string]string{"logs and responses": captured, "last_error": strings.Join(lastErrors, "\n")}
		if slices.Contains(secrets, pw) {
			texts["driver_info rows"] = strings.Join(rows, "\n")
		}
		for what, text := range texts {
			if i := strings.Index(text, pw); i >= 0 {
				t.Errorf("password %q found in %s: …%s…", pw, what, text[max(0, i-300):min(len(text), i+100)])
			}
		}
	}
	if os.Getenv("LOGSCAN_DUMP") != "" {
		t.Log(captured)
	}
	t.Logf("scanned %d bytes of logs and responses, %d last_error values", len(captured), len(lastErrors))
}
