package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// service is a server the goals run measures: its URL, the processes whose
// CPU time and memory are its cost (with their children: Ironic's API
// workers, Rivet's driver plugins), and how to stop it.
type service struct {
	name  string
	url   string
	procs []*proc
	stop  func() []error
}

// cpu is the CPU time the service's processes and their children have
// used so far.
func (s *service) cpu() (time.Duration, bool) {
	var total time.Duration
	for _, p := range s.procs {
		for _, pid := range append([]int{p.pid()}, children(p.pid())...) {
			c, ok := procCPU(pid)
			if !ok && pid == p.pid() {
				return 0, false
			}
			total += c
		}
	}
	return total, true
}

// memory is the resident memory of the service's processes and their
// children, summed.
func (s *service) memory() Memory {
	var m Memory
	for _, p := range s.procs {
		for _, pid := range append([]int{p.pid()}, children(p.pid())...) {
			if x, err := memoryOf(pid); err == nil {
				m = m.Add(x)
			}
		}
	}
	return m
}

func (s *service) exited() *proc {
	for _, p := range s.procs {
		if p.exited() {
			return p
		}
	}
	return nil
}

// deploymentService wraps a PostgreSQL deployment of rivet (split or
// all-in-one).
func deploymentService(name string, d *deployment) *service {
	return &service{name: name, url: d.apiURL, procs: d.procs(), stop: d.down}
}

// startDev starts `rivet dev` as a newcomer would, with its embedded
// defaults: SQLite in a fresh --state-dir, in-process RPC, the built-in
// drivers, no simulated Redfish nodes (the bench enrolls fake-hardware
// ones), on a free loopback port.
func startDev(ctx context.Context, bin, dir string) (*service, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	state, err := os.MkdirTemp(dir, "dev-state-")
	if err != nil {
		return nil, err
	}
	name := "rivet-dev-" + filepath.Base(state)
	p, err := startProc(dir, name, filepath.Join(bin, "rivet"), "dev", "--state-dir", state,
		"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--sim-nodes", "0")
	if err != nil {
		os.RemoveAll(state)
		return nil, err
	}
	s := &service{name: "rivet dev", url: fmt.Sprintf("http://127.0.0.1:%d", port), procs: []*proc{p}}
	s.stop = func() []error {
		var errs []error
		if err := p.stop(20 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
		if err := os.RemoveAll(state); err != nil {
			errs = append(errs, err)
		}
		return errs
	}
	if err := waitReady(ctx, s.url, s.procs, time.Minute); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// ironicConfig is the ironic.conf of the Ironic the goals run starts:
// Debian's 21.4 API (api_workers 2, as Ironic's earlier figures here)
// and one conductor, noauth, JSON-RPC on loopback, fake-hardware with
// the fake interfaces only, its own PostgreSQL database.
func ironicConfig(dbURL string, apiPort, rpcPort int) string {
	opts := []option{
		// The conductor registers under host; the API's JSON-RPC client
		// connects to it on [json_rpc] port.
		{"DEFAULT", "host", "127.0.0.1"},
		{"DEFAULT", "auth_strategy", "noauth"},
		{"DEFAULT", "rpc_transport", "json-rpc"},
		{"DEFAULT", "enabled_hardware_types", "fake-hardware"},
	}
	for _, iface := range []string{"bios", "boot", "deploy", "inspect", "management", "power", "raid", "rescue", "vendor"} {
		opts = append(opts, option{"DEFAULT", "enabled_" + iface + "_interfaces", "fake"})
	}
	opts = append(opts,
		option{"DEFAULT", "enabled_network_interfaces", "noop"},
		option{"DEFAULT", "enabled_storage_interfaces", "noop"},
		option{"api", "host_ip", "127.0.0.1"},
		option{"api", "port", strconv.Itoa(apiPort)},
		option{"api", "api_workers", "2"},
		option{"conductor", "automated_clean", "false"},
		option{"database", "connection", dbURL},
		option{"dhcp", "dhcp_provider", "none"},
		option{"json_rpc", "auth_strategy", "noauth"},
		option{"json_rpc", "host_ip", "127.0.0.1"},
		option{"json_rpc", "port", strconv.Itoa(rpcPort)},
	)
	return renderConfig(opts)
}

// sqlalchemyURL turns the suite's postgresql:// URL of a database into
// the form oslo.db wants (SQLAlchemy with psycopg2).
func sqlalchemyURL(conn string) (string, error) {
	u, err := url.Parse(conn)
	if err != nil {
		return "", err
	}
	u.Scheme = "postgresql+psycopg2"
	return u.String(), nil
}

// ironicMissing is the error when Debian's Ironic cannot be imported.
const ironicMissing = "Ironic is not installed for %s: the --ironic target needs Debian's python3-ironic 21.4 and python3-psycopg2 " +
	"(DEBIAN_FRONTEND=noninteractive apt-get install -y python3-ironic python3-psycopg2), or --ironic-python naming a Python that imports ironic: %v\n%s"

// startIronic creates a database, runs ironic-dbsync create_schema and
// starts ironic-conductor and ironic-api as processes of the bench (the
// Debian packages' service units are not used), waiting until the API
// lists fake-hardware.
func startIronic(ctx context.Context, srv *server, python, dir string) (*service, error) {
	out, err := exec.CommandContext(ctx, python, "-c", "import ironic.cmd.api, ironic.cmd.conductor, ironic.cmd.dbsync, psycopg2").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf(ironicMissing, python, err, out)
	}
	name, conn, err := srv.createDatabase(ctx)
	if err != nil {
		return nil, err
	}
	var procs []*proc
	stop := func() []error {
		var errs []error
		for _, p := range procs {
			if err := p.stop(30 * time.Second); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
			}
		}
		if err := srv.dropDatabase(name); err != nil {
			errs = append(errs, fmt.Errorf("drop database %s: %w", name, err))
		}
		return errs
	}
	ok := false
	defer func() {
		if !ok {
			stop()
		}
	}()
	dbURL, err := sqlalchemyURL(conn)
	if err != nil {
		return nil, err
	}
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	rpcPort, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, name+"-ironic.conf")
	if err := writeFile(conf, ironicConfig(dbURL, apiPort, rpcPort)); err != nil {
		return nil, err
	}
	// ironic.cmd.dbsync has no __main__ block, unlike the API and conductor.
	sync := exec.CommandContext(ctx, python, "-c", "import sys; from ironic.cmd.dbsync import main; sys.exit(main())",
		"--config-file", conf, "create_schema")
	if out, err := sync.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ironic-dbsync create_schema: %v\n%s", err, out)
	}
	cond, err := startProc(dir, name+"-ironic-conductor", python, "-m", "ironic.cmd.conductor", "--config-file", conf)
	if err != nil {
		return nil, err
	}
	procs = append(procs, cond)
	api, err := startProc(dir, name+"-ironic-api", python, "-m", "ironic.cmd.api", "--config-file", conf)
	if err != nil {
		return nil, err
	}
	procs = append(procs, api)
	s := &service{name: "Ironic 21.4", url: fmt.Sprintf("http://127.0.0.1:%d", apiPort), procs: procs, stop: stop}
	// Python's imports take seconds per process on this machine.
	if err := waitReady(ctx, s.url, procs, 5*time.Minute); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}
