package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
	"github.com/rivetmetal/rivet/db/upgrade"
	"github.com/urfave/cli/v2"
)

const upgradeCheckDescription = `Checks whether it is safe to go on with a rolling upgrade, as
ironic-status upgrade check does. Run it with the NEW release's binary
before step 0 (dbsync upgrade), and again between steps.

Exit codes: 0 every check passed; 1 at least one warning (read the
details: usually an upgrade in progress or pending online migrations);
2 at least one failure (do not go on); 127 bad arguments.`

func upgradeCommand() *cli.Command {
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "print JSON"}
	return &cli.Command{
		Name:  "upgrade",
		Usage: "see where a rolling upgrade stands and whether it is safe to go on",
		Subcommands: []*cli.Command{
			{
				Name:   "status",
				Usage:  "services with release, service version, pin and state (live, unknown, stopped, gone); the finalized release; object versions in the database; pending online migrations and what blocks them",
				Flags:  []cli.Flag{jsonFlag},
				Action: upgradeStatus,
			},
			{
				Name:        "check",
				Usage:       "pass/warn/fail checks before and during a rolling upgrade",
				Description: upgradeCheckDescription,
				Flags:       []cli.Flag{jsonFlag},
				Action:      upgradeCheck,
			},
			{
				Name:        "forget",
				Usage:       "say that a service which stopped heartbeating is gone for good, so it no longer holds back the upgrade",
				ArgsUsage:   "BINARY HOST",
				Description: upgradeForgetDescription,
				Action:      upgradeForget,
			},
		},
	}
}

const upgradeForgetDescription = `Removes a service that is not live from the services registry, as
rivet upgrade status lists it (BINARY is rivet-api or rivet-conductor, or
api or conductor; HOST is its HOST column: [DEFAULT] host, or host:port
for a conductor whose [json_rpc] port is not 8089).

A service that stops heartbeating is "unknown", not gone: it may be paused,
partitioned or cut off from the database, and come back running the
release it ran. Until it is forgotten (or [DEFAULT] service_forget_timeout
passes) it still counts: pin_release_version = auto follows its release,
the finalized release does not pass it, and online data migrations wait
for it. Forget a service only when it will not come back as it was (its
host was removed, or it was replaced under another name). A forgotten
service that is still running registers again at its next heartbeat.

Exit codes: 0 forgotten; 2 refused (no such service, or it is live);
127 bad arguments.`

// upgradeEnv is what the upgrade commands read: the database, the online
// migrations and how services rows are classified (live, unknown, stopped,
// gone).
type upgradeEnv struct {
	db       *db.DB
	reg      *onlinemigrations.Registry
	liveness db.Liveness
}

// withUpgradeEnv loads the configuration, opens the database and runs fn.
func withUpgradeEnv(c *cli.Context, fn func(upgradeEnv) error) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	d, err := db.Open(c.Context, cfg.Database.Connection, dbOptions(cfg))
	if err != nil {
		return cli.Exit("upgrade: "+err.Error(), 2)
	}
	defer d.Close()
	migrationOptions = onlinemigrations.Options{LiveTimeout: cfg.Conductor.HeartbeatTimeout}
	reg, err := onlineMigrations()
	if err != nil {
		return cli.Exit("upgrade: "+err.Error(), 2)
	}
	return fn(upgradeEnv{db: d, reg: reg, liveness: db.Liveness{Timeout: cfg.Conductor.HeartbeatTimeout, Forget: cfg.Default.ServiceForgetTimeout}})
}

func upgradeStatus(c *cli.Context) error {
	return withUpgradeEnv(c, func(e upgradeEnv) error { return printUpgradeStatus(c, e) })
}

func printUpgradeStatus(c *cli.Context, e upgradeEnv) error {
	st, err := upgrade.Collect(c.Context, e.db, release.Default(), e.reg, e.liveness)
	if err != nil {
		return cli.Exit("upgrade status: "+err.Error(), 2)
	}
	if c.Bool("json") {
		return writeUpgradeJSON(c.App.Writer, st)
	}
	printStatus(c.App.Writer, st)
	return nil
}

func printStatus(out io.Writer, st *upgrade.Status) {
	fmt.Fprintf(out, "This binary: release %s, service version %d\n", st.Release, st.ServiceVersion)
	fmt.Fprintf(out, "Schema: %s", noneIfEmpty(st.Schema.Current()))
	if len(st.Schema.Pending) > 0 {
		fmt.Fprintf(out, " (%d pending: run `rivet dbsync upgrade`)", len(st.Schema.Pending))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "pin_release_version = auto would resolve to: %s\n", noneIfEmpty(st.AutoPin))
	if f := st.Finalized; f != nil {
		fmt.Fprintf(out, "Finalized release: %s (service version %d, since %s); older services refuse to start\n",
			f.Release, f.ServiceVersion, f.UpdatedAt.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintln(out, "Finalized release: (none yet)")
	}
	fmt.Fprint(out, "\nServices:\n")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  BINARY\tHOST\tRELEASE\tSERVICE VERSION\tSPEAKS\tPIN\tUSES\tSTATE\tLAST HEARTBEAT")
	states := map[db.ServiceState]bool{}
	for _, s := range st.Services {
		pin, uses := "-", "-"
		if s.Pin != nil && *s.Pin != "" {
			pin = *s.Pin
		}
		if s.Uses != "" {
			uses = s.Uses
		}
		states[s.State] = true
		fmt.Fprintf(w, "  %s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Binary, s.Hostname, s.Release, s.ServiceVersion,
			noneIfEmpty(s.Speaks), pin, uses, s.State, s.UpdatedAt.UTC().Format(time.RFC3339))
	}
	w.Flush()
	if states[db.ServiceUnknown] {
		fmt.Fprintln(out, "  unknown: online but not heartbeating (paused, partitioned, crashed, or cut off from the database). It still counts for\n"+
			"  the auto pin, the finalized release and online migrations: run `rivet upgrade forget BINARY HOST` if it is gone for good.")
	}
	if states[db.ServiceStopped] {
		fmt.Fprintln(out, "  stopped: shut down cleanly; still counts until it starts again, is forgotten, or service_forget_timeout passes.")
	}
	if states[db.ServiceGone] {
		fmt.Fprintln(out, "  gone: quiet for longer than service_forget_timeout; no longer counts.")
	}
	fmt.Fprintln(out, "\nObject versions in the database:")
	for _, o := range st.Objects {
		fmt.Fprintf(w, "  %s\t%s\t%d rows\n", o.Table, o.Version, o.Rows)
	}
	w.Flush()
	fmt.Fprintln(out, "\nOnline data migrations:")
	for _, m := range st.Migrations {
		pending := "unknown"
		if m.Pending >= 0 {
			pending = fmt.Sprint(m.Pending)
		}
		blocked := ""
		if len(m.BlockedBy) > 0 {
			blocked = "\tblocked by " + strings.Join(m.BlockedBy, ", ")
		}
		fmt.Fprintf(w, "  %s\t%s pending\tneeds service version %d%s\n", m.Name, pending, m.MinServiceVersion, blocked)
	}
	w.Flush()
}

// upgradeForget removes a service that is not live from the registry.
func upgradeForget(c *cli.Context) error {
	if c.NArg() != 2 {
		return cli.Exit("upgrade forget: want BINARY HOST (e.g. rivet-api host-1); `rivet upgrade status` lists the services", 127)
	}
	binary, host := c.Args().Get(0), c.Args().Get(1)
	switch binary {
	case "api", "conductor":
		binary = "rivet-" + binary
	case db.BinaryAPI, db.BinaryConductor:
	default:
		return cli.Exit(fmt.Sprintf("upgrade forget: unknown binary %q: want rivet-api or rivet-conductor (or api, conductor)", binary), 127)
	}
	return withUpgradeEnv(c, func(e upgradeEnv) error {
		ctx := c.Context
		now, err := e.db.Now(ctx)
		if err != nil {
			return cli.Exit("upgrade forget: "+err.Error(), 2)
		}
		svcs, err := e.db.Services(ctx)
		if err != nil {
			return cli.Exit("upgrade forget: "+err.Error(), 2)
		}
		i := slices.IndexFunc(svcs, func(s db.Service) bool { return s.Binary == binary && s.Hostname == host })
		if i < 0 {
			return cli.Exit(fmt.Sprintf("upgrade forget: no %s on %s is registered; `rivet upgrade status` lists the services", binary, host), 2)
		}
		s := svcs[i]
		state := s.State(now, e.liveness)
		if state == db.ServiceLive {
			return cli.Exit(fmt.Sprintf("upgrade forget: %s is live (last heartbeat %s): stop it first; a running service registers again at its next heartbeat",
				s.Name(), s.UpdatedAt.UTC().Format(time.RFC3339)), 2)
		}
		if _, err := e.db.ForgetService(ctx, host, binary); err != nil {
			return cli.Exit("upgrade forget: "+err.Error(), 2)
		}
		fmt.Fprintf(c.App.Writer, "Forgot %s (release %s, service version %d, %s, last heard from %s): it no longer counts for "+
			"pin_release_version = auto, the finalized release or online data migrations. If it runs after all, it registers again at its next heartbeat.\n",
			s.Name(), s.Release, s.ServiceVersion, state, s.UpdatedAt.UTC().Format(time.RFC3339))
		var known []int
		for _, o := range append(svcs[:i:i], svcs[i+1:]...) {
			if o.State(now, e.liveness).Known() {
				known = append(known, o.ServiceVersion)
			}
		}
		tb := release.Default()
		fmt.Fprintf(c.App.Writer, "pin_release_version = auto now resolves to: %s\n", tb.Resolve(release.Pin{Mode: release.PinAuto}, known).Label())
		return nil
	})
}

func upgradeCheck(c *cli.Context) error {
	return withUpgradeEnv(c, func(e upgradeEnv) error { return runUpgradeCheck(c, e) })
}

func runUpgradeCheck(c *cli.Context, e upgradeEnv) error {
	rs, err := upgrade.Check(c.Context, e.db, release.Default(), e.reg, e.liveness)
	if err != nil {
		return cli.Exit("upgrade check: "+err.Error(), 2)
	}
	if c.Bool("json") {
		if err := writeUpgradeJSON(c.App.Writer, rs); err != nil {
			return err
		}
	} else {
		for _, r := range rs {
			fmt.Fprintf(c.App.Writer, "%-24s %s\n", r.Check+":", r.Code)
			if r.Details != "" {
				fmt.Fprintf(c.App.Writer, "  %s\n", strings.Join(strings.Fields(r.Details), " "))
			}
		}
	}
	if code := upgrade.Worst(rs); code != upgrade.Success {
		return cli.Exit("", int(code))
	}
	return nil
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func writeUpgradeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
