package conductor

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/rpc/jsonrpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins/plugintest"
	"github.com/rivetmetal/rivet/test/testenv"
)

// Timings every conductor of these tests runs with.
const (
	heartbeatTimeout = 3 * time.Second
	checkInterval    = time.Second
)

var rivetBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rivet-conductor-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rivetBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/cmd/rivet", "rivet")
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "build rivet:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is a PostgreSQL database with its schema and the conductors
// started on it.
type cluster struct {
	t     *testing.T
	dbURL string
	dbh   *db.DB
	store *db.Store
	api   rpc.ConductorAPI
	route *rpc.Router
	auth  *rpcAuth // JSON-RPC http_basic of every conductor; nil: noauth
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return newClusterAuth(t, nil)
}

// newClusterAuth is newCluster with JSON-RPC http_basic (auth non-nil) on
// every conductor and in the test's own client.
func newClusterAuth(t *testing.T, auth *rpcAuth) *cluster {
	t.Helper()
	url := testenv.RequirePostgres(t)
	cfg := writeConfig(t, "schema", url, 0)
	if out, err := exec.Command(rivetBin, "--config-file", cfg, "dbsync", "create-schema").CombinedOutput(); err != nil {
		t.Fatalf("rivet dbsync create-schema: %v\n%s", err, out)
	}
	ctx := context.Background()
	dbh, err := db.Open(ctx, url, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbh.Close() })
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})
	lister := func(ctx context.Context) ([]rpc.ConductorInfo, error) {
		cs, err := dbh.LiveConductors(ctx, heartbeatTimeout)
		if err != nil {
			return nil, err
		}
		out := make([]rpc.ConductorInfo, len(cs))
		for i, c := range cs {
			out[i] = rpc.ConductorInfo{Hostname: c.Hostname, Group: c.ConductorGroup, HardwareTypes: c.Drivers}
		}
		return out, nil
	}
	opts := jsonrpc.HTTPTransportOptions{Timeout: 10 * time.Second}
	if auth != nil {
		opts.Username, opts.Password = auth.user, auth.password
	}
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(reg, pinner), jsonrpc.NewHTTPTransport(opts))
	router := rpc.NewRouter(lister, 5, time.Second)
	return &cluster{t: t, dbURL: url, dbh: dbh, store: db.NewStore(dbh, reg, pinner),
		api: rpc.ConductorAPI{Client: client, Router: router}, route: router, auth: auth}
}

// writeConfig writes a configuration for a conductor listening on port;
// [json_rpc] host_ip stays at its default (127.0.0.1), which the tests
// thereby rely on.
func writeConfig(t *testing.T, name, dbURL string, port int) string {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf(`[DEFAULT]
host = 127.0.0.1
log_level = debug
[conductor]
heartbeat_interval = 1
heartbeat_timeout = %d
check_provision_state_interval = %d
lease_duration = 3
node_locked_retry_attempts = 1
node_locked_retry_interval = 0.2
enabled_hardware_types = fake-hardware
plugin_dir = %s
sync_power_state_interval = 0
graceful_shutdown_timeout = 20
[database]
connection = %s
[json_rpc]
port = %d
`, int(heartbeatTimeout/time.Second), int(checkInterval/time.Second), dir, dbURL, max(port, 1))
	path := filepath.Join(dir, name+".conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// proc is a running `rivet conductor`.
type proc struct {
	name string // registered name, 127.0.0.1:port
	conf string // its configuration file
	cmd  *exec.Cmd
	log  *testenv.SyncBuffer
	done chan struct{}
	err  error
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs a conductor and waits until it is live in the database.
func (c *cluster) start(label string) *proc {
	c.t.Helper()
	return c.startEnv(label)
}

// startEnv is start with variables added to the conductor's environment.
func (c *cluster) startEnv(label string, env ...string) *proc {
	t := c.t
	t.Helper()
	port := freePort(t)
	conf := writeConfig(t, label, c.dbURL, port)
	cmd := exec.Command(rivetBin, "--config-file", conf, "conductor")
	cmd.Env = append(os.Environ(), env...)
	if c.auth != nil {
		cmd.Env = append(cmd.Env, c.auth.env()...)
	}
	host := "127.0.0.1"
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "RIVET_DEFAULT_HOST="); ok {
			host = h
		}
	}
	p := &proc{name: net.JoinHostPort(host, strconv.Itoa(port)), conf: conf, cmd: cmd, log: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("conductor %s (%s) output:\n%s", label, p.name, p.log.String())
		}
	})
	c.waitUntil(15*time.Second, "conductor "+label+" live", func() bool {
		select {
		case <-p.done:
			t.Fatalf("conductor %s exited at start: %v\n%s", label, p.err, p.log.String())
		default:
		}
		return slices.Contains(c.live(), p.name)
	})
	return p
}

func (c *cluster) live() []string {
	cs, err := c.dbh.LiveConductors(context.Background(), heartbeatTimeout)
	if err != nil {
		c.t.Fatal(err)
	}
	var names []string
	for _, x := range cs {
		names = append(names, x.Hostname)
	}
	return names
}

// signal sends sig to the process.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) waitUntil(limit time.Duration, what string, cond func() bool) time.Duration {
	c.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			c.t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

func (c *cluster) node(uuid string) *objects.Node {
	c.t.Helper()
	n, err := c.store.GetNode(context.Background(), uuid)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// available enrolls a fake-hardware node with driver_info and makes it
// available through the conductors.
func (c *cluster) available(name string, driverInfo map[string]any) *objects.Node {
	c.t.Helper()
	ctx := context.Background()
	n, err := c.api.CreateNode(ctx, &objects.Node{Name: &name, Driver: "fake-hardware", DriverInfo: driverInfo})
	if err != nil {
		c.t.Fatalf("create_node: %v", err)
	}
	for _, verb := range []string{"manage", "provide"} {
		if err := c.api.DoProvisioningAction(ctx, n, verb); err != nil {
			c.t.Fatalf("%s: %v", verb, err)
		}
		want := map[string]string{"manage": "manageable", "provide": "available"}[verb]
		c.waitUntil(10*time.Second, name+" "+want, func() bool {
			got := c.node(n.UUID)
			return got.ProvisionState == want && got.Reservation == nil
		})
	}
	return n
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
