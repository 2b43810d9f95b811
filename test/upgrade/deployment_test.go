package upgrade

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/test/testenv"
	"golang.org/x/crypto/bcrypt"
)

// Timings of every service: heartbeats every second, so an automatic pin
// follows the fleet within seconds (a graceful stop marks a service
// offline at once, so nothing here waits for a heartbeat to expire). The
// timeout stays generous: on a loaded CI machine a heartbeat query can
// take seconds, and a live conductor must not drop out of the ring.
const (
	heartbeatTimeout   = 15 * time.Second
	apiShutdownDelay   = 3 * time.Second // > HAProxy's 2 failed checks (200 ms apart, 1 s each at worst)
	conductorStopLimit = 60 * time.Second
	apiStopLimit       = 30 * time.Second
	// leaseDuration is [conductor] lease_duration: a lease the killed
	// conductor held stays until it expires and a takeover check (every
	// 2 s) frees the node.
	leaseDuration = 10 * time.Second
)

// deployment is one rivet deployment on loopback and the simulated
// hardware it manages.
type deployment struct {
	t       *testing.T
	dir     string
	logDir  string // every process's output, kept when the test fails
	dialect string // "postgresql" or "mysql"
	dbURL   string
	dbh     *db.DB // the test's own connection, for checks
	// pg is the test's own PostgreSQL server when the run restarts the
	// database (nil: a private database on the shared server).
	pg  *testenv.PostgresServer
	old *build
	cur *build

	sim     *proc
	simURL  string
	ipmi    *testenv.IPMISimFleet
	lb      *haproxy
	healthz bool // every API release serves GET /healthz

	apis       []*service
	conductors []*service

	procs   []*proc  // every process started, to check they all ended
	plugins []procID // every driver plugin process seen under a conductor

	rpcUsers string // the conductors' JSON-RPC htpasswd file
}

// JSON-RPC runs with http_basic, as a deployment whose conductors other
// hosts reach must (issue 22): every release's API sends the credentials,
// every release's conductor checks them.
const (
	rpcUser     = "rpc"
	rpcPassword = "rpc-upgrade-pw"
)

// service is one rivet api or conductor: its place in the deployment
// (name, ports) stays while its binary and pin change.
type service struct {
	d    *deployment
	kind string // "api" or "conductor"
	// name is the HAProxy server name of an API, the label of a conductor.
	name string
	// host is [DEFAULT] host; registered is the name in the services table.
	host, registered string
	port             int // [api] port or [json_rpc] port
	conf             string
	b                *build
	pin              string
	pluginDir        string // [conductor] plugin_dir when not the binary's own folder
	p                *proc
	stopped          time.Time // when the last stop completed
}

func newDeployment(t *testing.T, dialect string, ownServer bool, old, cur *build) *deployment {
	t.Helper()
	d := &deployment{t: t, dir: t.TempDir(), dialect: dialect, old: old, cur: cur}
	switch {
	case ownServer && dialect == "postgresql":
		d.pg = testenv.StartPostgresServer(t)
		d.dbURL = d.pg.URL
	case ownServer:
		t.Fatalf("a server of the test's own is only available for PostgreSQL, not %q", dialect)
	case dialect == "postgresql":
		d.dbURL = testenv.RequirePostgres(t)
	case dialect == "mysql":
		d.dbURL = testenv.RequireMySQL(t)
	default:
		t.Fatalf("unknown dialect %q", dialect)
	}
	requireHAProxy(t)
	d.logDir = keptLogDir(t)
	// Cleanups run last-in first-out: this one, registered before any
	// process starts, runs after the processes' own and reports leftovers.
	t.Cleanup(d.killAll)
	dbh, err := db.Open(context.Background(), d.dbURL, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbh.Close() })
	d.dbh = dbh
	hash, err := bcrypt.GenerateFromPassword([]byte(rpcPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	d.rpcUsers = filepath.Join(d.dir, "htpasswd-json-rpc")
	if err := os.WriteFile(d.rpcUsers, []byte(rpcUser+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

// killAll ends whatever still runs when the test ends (normally nothing:
// the test stops everything and checks the exits itself).
func (d *deployment) killAll() {
	t := d.t
	// After a failure or a skip the test stopped early: killing is
	// expected then.
	report := t.Errorf
	if t.Failed() || t.Skipped() {
		report = t.Logf
	}
	for _, p := range d.procs {
		if !p.exited() {
			report("%s still running at cleanup; killing it", p.name)
			p.kill()
		}
		if t.Failed() {
			t.Logf("---- %s output (last 60 lines) ----\n%s", p.name, tail(p.log.String(), 60))
		}
	}
	for _, id := range d.plugins {
		if id.alive() {
			report("plugin %s still running at cleanup; killing it", id)
			_ = syscall.Kill(id.pid, syscall.SIGKILL)
		}
	}
}

// start brings the deployment up at the old release: schema, simulators,
// two conductors, two APIs, HAProxy.
func (d *deployment) start(pin string, redfishSystems, ipmiBMCs int) {
	t := d.t
	t.Helper()
	d.rivet(d.old, "dbsync", "create-schema").ok(t)
	d.startSim(redfishSystems)
	d.ipmi = testenv.StartIPMISim(t, ipmiBMCs, false, ipmiUser, ipmiPassword)
	for i := range 2 {
		s := &service{d: d, kind: "conductor", name: fmt.Sprintf("conductor-%d", i+1), host: "127.0.0.1", port: freePort(t), b: d.old, pin: pin}
		s.registered = s.host + ":" + strconv.Itoa(s.port)
		d.conductors = append(d.conductors, s)
		s.start()
	}
	for i := range 2 {
		s := &service{d: d, kind: "api", name: fmt.Sprintf("api-%d", i+1), port: freePort(t), b: d.old, pin: pin}
		s.host, s.registered = s.name, s.name
		d.apis = append(d.apis, s)
		s.start()
	}
	d.healthz = d.old.has("api", "shutdown_delay") && d.cur.has("api", "shutdown_delay")
	if d.healthz {
		for _, s := range d.apis {
			if code := httpStatus(s.url() + "/healthz"); code != http.StatusOK {
				t.Fatalf("%s: GET /healthz = %d, want 200", s.name, code)
			}
		}
	}
	var names, addrs []string
	for _, s := range d.apis {
		names, addrs = append(names, s.name), append(addrs, fmt.Sprintf("127.0.0.1:%d", s.port))
	}
	d.lb = startHAProxy(t, d.dir, d.logDir, d.healthz, names, addrs)
	d.procs = append(d.procs, d.lb.p)
}

// startSim runs rivet-sim with n systems. The BMCs are hardware: they
// stay up, at whatever release, through the upgrade.
func (d *deployment) startSim(n int) {
	t := d.t
	port := freePort(t)
	d.simURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	d.sim = startProc(t, d.logDir, "rivet-sim", d.cur.bin("rivet-sim"), "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--systems", strconv.Itoa(n), "--power-settle", "300ms")
	d.procs = append(d.procs, d.sim)
	waitFor(t, 10*time.Second, "rivet-sim serving", func() bool {
		if d.sim.exited() {
			t.Fatalf("rivet-sim exited: %v\n%s", d.sim.err, d.sim.log.String())
		}
		return strings.Contains(d.sim.log.String(), "Redfish service at")
	})
}

const (
	ipmiUser     = "admin"
	ipmiPassword = "ipmi-upgrade-pw"
)

func (s *service) url() string { return fmt.Sprintf("http://127.0.0.1:%d", s.port) }

// writeConfig writes the service's configuration for its current binary
// and pin. Options the binary's release does not know are left out (an
// unknown option stops a service).
func (s *service) writeConfig() {
	t := s.d.t
	if s.conf == "" {
		s.conf = filepath.Join(s.d.dir, s.name+".conf")
	}
	rpcPort := "" // an API only calls conductors, at their registered host:port
	if s.kind == "conductor" {
		rpcPort = strconv.Itoa(s.port)
	}
	opts := [][3]string{
		{"DEFAULT", "host", s.host},
		{"DEFAULT", "log_level", "info"},
		{"DEFAULT", "pin_release_version", s.pin},
		{"DEFAULT", "service_heartbeat_interval", "1"},
		{"DEFAULT", "hash_ring_reset_interval", "2"},
		{"api", "host_ip", "127.0.0.1"},
		{"api", "port", strconv.Itoa(s.port)},
		{"api", "graceful_shutdown_timeout", "20"},
		{"api", "shutdown_delay", strconv.FormatFloat(apiShutdownDelay.Seconds(), 'f', -1, 64)},
		{"conductor", "heartbeat_interval", "1"},
		{"conductor", "heartbeat_timeout", strconv.Itoa(int(heartbeatTimeout / time.Second))},
		{"conductor", "enabled_hardware_types", "fake-hardware,ipmi,redfish"},
		{"conductor", "plugin_dir", cmp.Or(s.pluginDir, s.b.dir)},
		{"conductor", "sync_power_state_interval", "5"},
		{"conductor", "graceful_shutdown_timeout", "30"},
		{"conductor", "lease_duration", strconv.Itoa(int(leaseDuration / time.Second))},
		{"conductor", "check_provision_state_interval", "2"},
		{"conductor", "node_locked_retry_attempts", "3"},
		{"conductor", "node_locked_retry_interval", "0.5"},
		{"database", "connection", s.d.dbURL},
		{"database", "max_open_connections", "10"},
		{"json_rpc", "host_ip", "127.0.0.1"},
		{"json_rpc", "port", rpcPort},
		{"json_rpc", "timeout", "60"},
		{"json_rpc", "auth_strategy", "http_basic"},
		{"json_rpc", "http_basic_auth_user_file", s.d.rpcUsers},
		{"json_rpc", "username", rpcUser},
		{"json_rpc", "password", rpcPassword},
		{"ipmi", "min_command_interval", "0.2"},
	}
	if err := os.WriteFile(s.conf, []byte(renderConfig(s.b, opts)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// renderConfig renders options as INI for build b, leaving out empty
// values and options b does not know.
func renderConfig(b *build, opts [][3]string) string {
	var out strings.Builder
	section := ""
	for _, o := range opts {
		if o[2] == "" || !b.has(o[0], o[1]) {
			continue
		}
		if o[0] != section {
			section = o[0]
			fmt.Fprintf(&out, "[%s]\n", section)
		}
		fmt.Fprintf(&out, "%s = %s\n", o[1], o[2])
	}
	return out.String()
}

// start runs the service with its binary and pin and waits until it
// serves: an API answers GET /, a conductor is live in the hash ring.
func (s *service) start() {
	t := s.d.t
	t.Helper()
	s.writeConfig()
	s.p = startProc(t, s.d.logDir, fmt.Sprintf("%s (%s, %s)", s.name, s.b.label, s.b.info.Release), s.b.bin("rivet"), "--config-file", s.conf, s.kind)
	s.d.procs = append(s.d.procs, s.p)
	limit := 30 * time.Second
	waitFor(t, limit, s.name+" serving", func() bool {
		if s.p.exited() {
			t.Fatalf("%s exited at start: %v\n%s", s.p.name, s.p.err, s.p.log.String())
		}
		if s.kind == "api" {
			return httpStatus(s.url()+"/") == http.StatusOK
		}
		// A conductor killed with SIGKILL leaves its row live for a
		// while: its JSON-RPC port answering tells the new process apart.
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second); err != nil {
			return false
		} else {
			c.Close()
		}
		live, err := s.d.dbh.LiveConductors(context.Background(), heartbeatTimeout)
		return err == nil && slices.ContainsFunc(live, func(c db.Conductor) bool { return c.Hostname == s.registered })
	})
	if s.kind == "conductor" {
		s.d.notePlugins(s)
	}
}

// notePlugins records the driver plugin processes a conductor runs.
func (d *deployment) notePlugins(s *service) {
	kids, err := children(s.p.pid())
	if err != nil {
		d.t.Fatal(err)
	}
	for _, k := range kids {
		if !slices.Contains(d.plugins, k) {
			d.plugins = append(d.plugins, k)
		}
	}
}

// stop stops the service gracefully and checks it exited 0 in time and
// left no plugin process behind. An API is drained by HAProxy first.
func (s *service) stop() {
	t := s.d.t
	t.Helper()
	limit := conductorStopLimit
	if s.kind == "api" {
		limit = apiStopLimit
	} else {
		s.d.notePlugins(s)
	}
	var kids []procID
	if s.kind == "conductor" {
		kids, _ = children(s.p.pid())
	}
	drained := s.kind == "api" && s.d.healthz
	if s.kind == "api" && !drained && s.d.lb != nil {
		// The release lacks /healthz and shutdown_delay: drain by hand.
		if _, err := s.d.lb.command(fmt.Sprintf("set server %s/%s state drain", backend, s.name)); err != nil {
			t.Fatal(err)
		}
		s.d.lb.waitState(t, s.name, "DRAIN", 5*time.Second)
	}
	start := time.Now()
	if drained {
		_ = s.p.cmd.Process.Signal(syscall.SIGTERM)
		// HAProxy must see /healthz fail and take the API out well before
		// its listener closes (shutdown_delay).
		s.d.lb.waitState(t, s.name, "DOWN", apiShutdownDelay)
	}
	exit, timedOut := s.p.stop(limit)
	if timedOut {
		t.Fatalf("%s did not exit within %v of SIGTERM", s.p.name, limit)
	}
	if exit != nil {
		t.Fatalf("%s exited with %v after SIGTERM, want 0\n%s", s.p.name, exit, tail(s.p.log.String(), 40))
	}
	s.stopped = time.Now()
	t.Logf("%s stopped in %v", s.p.name, s.stopped.Sub(start).Round(time.Millisecond))
	waitFor(t, 5*time.Second, s.name+"'s plugin processes gone", func() bool {
		return !slices.ContainsFunc(kids, procID.alive)
	})
}

// replace stops the service and starts it again with build b and pin, on
// the same host name and port.
func (s *service) replace(b *build, pin string) {
	t := s.d.t
	t.Helper()
	s.restartAs(b, pin)
	if s.kind == "api" {
		if !s.d.healthz {
			if _, err := s.d.lb.command(fmt.Sprintf("set server %s/%s state ready", backend, s.name)); err != nil {
				t.Fatal(err)
			}
		}
		s.d.lb.waitState(t, s.name, "UP", 10*time.Second)
	}
}

// restartAs stops the service and starts it again with build b and pin,
// on the same host name and port, outside any load balancer (replace puts
// an API back into HAProxy's rotation).
func (s *service) restartAs(b *build, pin string) {
	s.d.t.Helper()
	s.stop()
	s.b, s.pin = b, pin
	s.start()
}

// repin changes the pin in the configuration file and sends SIGHUP, as an
// operator unpins at step 3; it waits until the services table shows it.
func (s *service) repin(pin string) {
	t := s.d.t
	t.Helper()
	s.pin = pin
	s.writeConfig()
	if err := s.p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	binary := db.BinaryAPI
	if s.kind == "conductor" {
		binary = db.BinaryConductor
	}
	waitFor(t, 10*time.Second, s.name+" reloaded pin "+strconv.Quote(pin), func() bool {
		svcs, err := s.d.dbh.LiveServices(context.Background(), heartbeatTimeout)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(svcs, func(r db.Service) bool {
			return r.Hostname == s.registered && r.Binary == binary && deref(r.Pin) == pin
		})
	})
}

// services returns every API and conductor.
func (d *deployment) services() []*service { return append(slices.Clone(d.conductors), d.apis...) }

// rivetResult is the outcome of a rivet CLI run.
type rivetResult struct {
	args           []string
	stdout, stderr string
	code           int
}

// ok fails t unless the command exited 0.
func (r rivetResult) ok(t *testing.T) rivetResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("rivet %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// rivet runs a rivet command of build b against the deployment's database.
func (d *deployment) rivet(b *build, args ...string) rivetResult {
	d.t.Helper()
	conf := filepath.Join(d.dir, "admin-"+b.label+".conf")
	opts := [][3]string{
		{"DEFAULT", "log_level", "warn"},
		{"conductor", "heartbeat_interval", "1"},
		{"conductor", "heartbeat_timeout", strconv.Itoa(int(heartbeatTimeout / time.Second))},
		{"database", "connection", d.dbURL},
	}
	if err := os.WriteFile(conf, []byte(renderConfig(b, opts)), 0o600); err != nil {
		d.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin("rivet"), append([]string{"--config-file", conf}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := rivetResult{args: args, stdout: out.String(), stderr: errOut.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			d.t.Fatalf("rivet %s: %v", strings.Join(args, " "), err)
		}
		r.code = ee.ExitCode()
	}
	return r
}

// httpStatus is the status of a GET, 0 when the request fails.
func httpStatus(url string) int {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
