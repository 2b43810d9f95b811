package main

import (
	"encoding/json"
	"fmt"
	"io"
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
				Usage:  "services with release, service version, pin and liveness; the finalized release; object versions in the database; pending online migrations",
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
		},
	}
}

// upgradeEnv is what both upgrade commands read: the database, the online
// migrations and the heartbeat age beyond which a service is dead.
type upgradeEnv struct {
	db      *db.DB
	reg     *onlinemigrations.Registry
	timeout time.Duration
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
	return fn(upgradeEnv{db: d, reg: reg, timeout: cfg.Conductor.HeartbeatTimeout})
}

func upgradeStatus(c *cli.Context) error {
	return withUpgradeEnv(c, func(e upgradeEnv) error { return printUpgradeStatus(c, e) })
}

func printUpgradeStatus(c *cli.Context, e upgradeEnv) error {
	st, err := upgrade.Collect(c.Context, e.db, release.Default(), e.reg, e.timeout)
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
	fmt.Fprintln(w, "  BINARY\tHOST\tRELEASE\tSERVICE VERSION\tSPEAKS\tPIN\tUSES\tLIVE\tLAST HEARTBEAT")
	for _, s := range st.Services {
		pin, uses := "-", "-"
		if s.Pin != nil && *s.Pin != "" {
			pin = *s.Pin
		}
		if s.Uses != "" {
			uses = s.Uses
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%d\t%s\t%s\t%s\t%v\t%s\n", s.Binary, s.Hostname, s.Release, s.ServiceVersion,
			noneIfEmpty(s.Speaks), pin, uses, s.Live, s.UpdatedAt.UTC().Format(time.RFC3339))
	}
	w.Flush()
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
		fmt.Fprintf(w, "  %s\t%s pending\tneeds service version %d\n", m.Name, pending, m.MinServiceVersion)
	}
	w.Flush()
}

func upgradeCheck(c *cli.Context) error {
	return withUpgradeEnv(c, func(e upgradeEnv) error { return runUpgradeCheck(c, e) })
}

func runUpgradeCheck(c *cli.Context, e upgradeEnv) error {
	rs, err := upgrade.Check(c.Context, e.db, release.Default(), e.reg, e.timeout)
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
