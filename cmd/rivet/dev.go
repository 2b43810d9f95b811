package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
)

const devDescription = `Runs everything a newcomer needs on one machine: the REST API and a
conductor in one process (with the driver plugins it starts), an embedded
SQLite database in --state-dir, and an embedded Redfish BMC simulator
(rivet-sim) whose systems are enrolled as nodes sim-0 … sim-N-1 and made
available. No authentication. Ctrl-C stops everything cleanly; starting
again reuses the state directory (nodes, their states and history).

Config files given with --config-file and RIVET_* environment variables
apply first; rivet dev then sets the database, the API address, noauth and
in-process RPC. The enabled hardware types are those of the configuration
([conductor] enabled_hardware_types, default fake-hardware, ipmi, redfish),
plus every --enable-driver: to try a third-party driver, put its
rivet-driver-NAME binary in a directory and run

  rivet dev --plugin-dir DIR --enable-driver HARDWARE_TYPE

The simulated Redfish nodes are enrolled only when redfish is enabled.

Unless GOGC is set, rivet dev runs Go's garbage collector at GOGC=400: its
heap is small, and the default would collect many times a second under load.`

func devCommand() *cli.Command {
	return &cli.Command{
		Name:        "dev",
		Usage:       "try Rivet without hardware: API + conductor + SQLite + simulated Redfish BMCs, one command",
		Description: devDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state-dir", Value: ".rivet-dev", Usage: "`DIR` holding the SQLite database; reused by the next start"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:6385", Usage: "API `ADDRESS` (host:port)"},
			&cli.IntFlag{Name: "sim-nodes", Value: 4, Usage: "simulated Redfish systems to enroll as nodes sim-0 … sim-`N-1`"},
			&cli.StringFlag{Name: "sim-listen", Value: defaultSimListen, Usage: "`ADDRESS` of the embedded Redfish simulator (when the default is in use, a free port is taken instead)"},
			&cli.StringSliceFlag{Name: "enable-driver", Usage: "also enable hardware type `NAME` (repeatable), beside [conductor] enabled_hardware_types"},
			&cli.StringFlag{Name: "plugin-dir", Usage: "`DIR` holding rivet-driver-* plugin binaries ([conductor] plugin_dir)"},
		},
		Action: runDev,
	}
}

func runDev(c *cli.Context) error {
	opts := devOptions{stateDir: c.String("state-dir"), listen: c.String("listen"), simNodes: c.Int("sim-nodes"), simListen: c.String("sim-listen"),
		simListenGiven: c.IsSet("sim-listen"), enableDrivers: c.StringSlice("enable-driver"), pluginDir: c.String("plugin-dir")}
	if opts.simNodes < 0 || opts.simNodes > sim.MaxSystems {
		return cli.Exit(fmt.Sprintf("dev: --sim-nodes %d: give 0 to %d", opts.simNodes, sim.MaxSystems), 2)
	}
	cfg, err := config.Load(configFiles(c), os.Environ())
	if err != nil {
		return cli.Exit("dev: invalid configuration: "+err.Error(), 2)
	}
	if err := opts.apply(cfg); err != nil {
		return cli.Exit("dev: "+err.Error(), 2)
	}
	log, level, err := logging.New(os.Stderr, cfg.Default.LogFormat, cfg.Default.LogLevel)
	if err != nil {
		return cli.Exit("dev: "+err.Error(), 2)
	}
	if pct, ok := devGCPercent(os.LookupEnv); ok {
		debug.SetGCPercent(pct)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := devRun(ctx, cfg, configFiles(c), opts, log, level, c.App.Writer); err != nil {
		return cli.Exit("dev: "+conductorErrLine(err), 1)
	}
	return nil
}

// devGOGC is rivet dev's GC target percentage unless GOGC is set. rivet
// dev holds a small live heap (about 4 MiB with 1,000 nodes), so at Go's
// default of 100 the pacer's 4 MiB minimum makes the collector run about
// 14 times a second under 16 concurrent GETs (GODEBUG=gctrace=1), each
// cycle taking a share of the two vCPUs the requests queue for, and the
// tail of GET latency with it (docs/performance.md, "GET tail latency
// (issue 32)"). At 400 the heap may grow to five times the live heap
// before a cycle: a quarter of the cycles, for about 17 MB more resident
// with 1,000 nodes.
const devGOGC = 400

// devGCPercent is the GC percentage rivet dev sets, and whether to set
// one: not when the operator chose one with GOGC.
func devGCPercent(lookupEnv func(string) (string, bool)) (int, bool) {
	if _, set := lookupEnv("GOGC"); set {
		return 0, false
	}
	return devGOGC, true
}

// defaultSimListen is the simulator's address unless --sim-listen says
// otherwise.
const defaultSimListen = "127.0.0.1:6386"

type devOptions struct {
	stateDir, listen, simListen string
	simNodes                    int
	// simListenGiven is set when --sim-listen was given: then its address
	// is used or rivet dev fails; the default moves to a free port.
	simListenGiven bool
	// enableDrivers are hardware types enabled beside the configuration's
	// (--enable-driver); pluginDir overrides [conductor] plugin_dir.
	enableDrivers []string
	pluginDir     string
}

// hardwareTypeName is what a hardware type name may hold.
var hardwareTypeName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// apply points cfg at the state directory and the dev defaults.
func (o devOptions) apply(cfg *config.Config) error {
	dir, err := filepath.Abs(o.stateDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--state-dir: %w", err)
	}
	host, port, err := net.SplitHostPort(o.listen)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port", o.listen)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("--listen %q: port must be 1 to 65535", o.listen)
	}
	cfg.Database.Connection = "sqlite:///" + filepath.ToSlash(filepath.Join(dir, "rivet.db"))
	cfg.API.HostIP, cfg.API.Port = host, p
	cfg.API.EnableSSLAPI = false
	cfg.Default.AuthStrategy = "noauth"
	cfg.Default.RPCTransport = "local"
	cfg.Default.Host = "rivet-dev"
	for _, hw := range o.enableDrivers {
		hw = strings.TrimSpace(hw)
		if !hardwareTypeName.MatchString(hw) {
			return fmt.Errorf("--enable-driver %q: want a hardware type name (lower case letters, digits, '-', '_', '.')", hw)
		}
		if !slices.Contains(cfg.Conductor.EnabledHardwareTypes, hw) {
			cfg.Conductor.EnabledHardwareTypes = append(cfg.Conductor.EnabledHardwareTypes, hw)
		}
	}
	if o.pluginDir != "" {
		pd, err := filepath.Abs(o.pluginDir)
		if err != nil {
			return fmt.Errorf("--plugin-dir: %w", err)
		}
		if fi, err := os.Stat(pd); err != nil || !fi.IsDir() {
			return fmt.Errorf("--plugin-dir %q: not a directory", o.pluginDir)
		}
		cfg.Conductor.PluginDir = pd
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := cfg.ValidateService(config.ServiceAllInOne); err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	return nil
}

// devRun migrates the database, starts the simulator and the all-in-one,
// enrolls the simulated nodes and serves until ctx ends.
func devRun(ctx context.Context, cfg *config.Config, files []string, o devOptions, log *slog.Logger, level *slog.LevelVar, out io.Writer) error {
	fmt.Fprintf(out, "rivet dev: preparing the database in %s …\n", o.stateDir)
	if err := devMigrate(ctx, cfg); err != nil {
		return err
	}
	bmc, err := sim.New(sim.Options{Systems: o.simNodes, Username: sim.DefaultUsername, Password: sim.DefaultPassword, Logger: log.With("service", "rivet-sim")})
	if err != nil {
		return err
	}
	simLn, err := listenSim(o, out)
	if err != nil {
		return err
	}
	simCtx, stopSim := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSim()
	go func() { _ = bmc.Serve(simCtx, simLn) }()
	defer bmc.Close()

	fmt.Fprintf(out, "rivet dev: starting the API and the conductor with its driver plugins (%s) …\n", strings.Join(cfg.Conductor.EnabledHardwareTypes, ", "))
	aio, err := startAllInOne(ctx, cfg, files, log, level, nil)
	if err != nil {
		return err
	}
	simURL := "http://" + simLn.Addr().String()
	if !slices.Contains(cfg.Conductor.EnabledHardwareTypes, "redfish") {
		log.Info("redfish is not an enabled hardware type: the simulated nodes are not enrolled",
			"enabled_hardware_types", cfg.Conductor.EnabledHardwareTypes)
	} else {
		fmt.Fprintf(out, "rivet dev: enrolling %d simulated nodes and making them available …\n", o.simNodes)
		if err := enrollSimNodes(ctx, aio.URL, simURL, o.simNodes, bmc, log); err != nil {
			log.Error("enrolling the simulated nodes failed; the API keeps serving", "error", err)
		}
	}
	fmt.Fprintf(out, `
Rivet dev is running.
  API:        %s   (noauth; Ironic clients work too: baremetal --os-endpoint %s --os-auth-type none)
  Redfish:    %s   (%d simulated systems, user %s)
  State:      %s
  Drivers:    %s
Try, in another terminal:
  export RIVET_URL=%s
  go run ./cmd/rivet node list
  go run ./cmd/rivet node power on sim-0
  go run ./cmd/rivet node deploy sim-1 --wait
Stop with Ctrl-C.
`, aio.URL, aio.URL, simURL, o.simNodes, sim.DefaultUsername, o.stateDir, strings.Join(cfg.Conductor.EnabledHardwareTypes, ", "), aio.URL)
	err = aio.Wait()
	stopSim()
	return err
}

// listenSim opens the simulator's listener: --sim-listen as given, or the
// default address, or, when that one is in use (another rivet dev, a
// rivet-sim), a free loopback port, saying so.
func listenSim(o devOptions, out io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", o.simListen)
	if err == nil {
		return ln, nil
	}
	if o.simListenGiven || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("--sim-listen %s: %w (choose another address with --sim-listen)", o.simListen, err)
	}
	host, _, _ := net.SplitHostPort(o.simListen)
	ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("--sim-listen: %s is in use and no free port was found: %w", o.simListen, err)
	}
	fmt.Fprintf(out, "rivet dev: %s is in use; the Redfish simulator listens on %s instead (--sim-listen chooses)\n", o.simListen, ln.Addr())
	return ln, nil
}

// devMigrate creates the schema of a new state directory, or applies the
// migrations a newer rivet brings to an existing one.
func devMigrate(ctx context.Context, cfg *config.Config) error {
	dbh, err := db.Open(ctx, cfg.Database.Connection, dbOptions(cfg))
	if err != nil {
		return err
	}
	defer dbh.Close()
	m, err := migrations.NewMigrator(dbh)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, nil)
	var locked *migrations.LockedError
	if errors.As(err, &locked) {
		return fmt.Errorf("%w (is another rivet dev using this --state-dir?)", err)
	}
	return err
}
