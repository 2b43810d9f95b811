package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db/dbsync"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// onlineMigrationInstallers register the online data migrations, in run
// order: each layer that owns migrations installs its own. The objects
// layer's update_to_latest_versions must come last.
var onlineMigrationInstallers = []func(*onlinemigrations.Registry) error{
	func(r *onlinemigrations.Registry) error { return onlinemigrations.Install(r, migrationOptions) },
	installUpdateToLatest,
}

// migrationKeys are the credential keys update_to_latest_versions reads
// and writes node rows with; runDBSync sets them from the configuration
// before the migrations are installed (one command per process).
var migrationKeys *keyring.Keyring

// migrationOptions configure the db layer's migrations: runDBSync sets the
// heartbeat timeout and where notes go before they are installed.
var migrationOptions onlinemigrations.Options

// installUpdateToLatest registers update_to_latest_versions, which rewrites
// old object rows through the versioned core.
func installUpdateToLatest(r *onlinemigrations.Registry) error {
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		return err
	}
	m, err := onlinemigrations.UpdateToLatestVersions(reg, release.Default().Head(), migrationKeys)
	if err != nil {
		return err
	}
	return r.Register(m)
}

func onlineMigrations() (*onlinemigrations.Registry, error) {
	r := &onlinemigrations.Registry{}
	for _, install := range onlineMigrationInstallers {
		if err := install(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

const dbsyncDescription = `Manages the database schema and data as ironic-dbsync does. With no
command, runs upgrade.

Exit codes: 0 done; 1 online migrations not finished (re-run) or an error;
2 refused (rows this release cannot read, migration lock held, a live
service too old for a migration, not an empty database for create-schema);
127 bad arguments.`

func dbsyncCommand() *cli.Command {
	cmd := &cli.Command{
		Name:         "dbsync",
		Usage:        "create or upgrade the database schema and run online data migrations",
		Description:  dbsyncDescription,
		OnUsageError: dbsyncUsageError,
		// ironic-dbsync takes --config-file after its name; so does this.
		Flags: []cli.Flag{configFileFlag()},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Exit(fmt.Sprintf("dbsync: unknown command %q: valid commands are create-schema, upgrade, version, unlock, online-data-migrations, rotate-key", c.Args().First()), dbsync.ExitBadArguments)
			}
			return runDBSync(c, (*dbsync.Syncer).Upgrade)
		},
		Subcommands: []*cli.Command{
			{
				Name:    "create-schema",
				Aliases: []string{"create_schema"},
				Usage:   "create the schema in an empty database",
				Action:  func(c *cli.Context) error { return runDBSync(c, (*dbsync.Syncer).CreateSchema) },
			},
			{
				Name: "upgrade",
				Usage: "check that every row is readable by this release, then apply pending schema " +
					"migrations (run it before upgrading any service)",
				Action: func(c *cli.Context) error { return runDBSync(c, (*dbsync.Syncer).Upgrade) },
			},
			{
				Name:   "version",
				Usage:  "print the schema revision (the last applied migration)",
				Action: func(c *cli.Context) error { return runDBSync(c, (*dbsync.Syncer).Version) },
			},
			{
				Name:   "unlock",
				Usage:  "remove the migration lock a crashed dbsync left behind",
				Action: func(c *cli.Context) error { return runDBSync(c, (*dbsync.Syncer).Unlock) },
			},
			onlineDataMigrationsCommand(),
			rotateKeyCommand(),
		},
	}
	for _, sub := range cmd.Subcommands {
		sub.OnUsageError = dbsyncUsageError
	}
	return cmd
}

func onlineDataMigrationsCommand() *cli.Command {
	return &cli.Command{
		Name:    "online-data-migrations",
		Aliases: []string{"online_data_migrations"},
		Usage: "migrate data to the forms this release writes while services keep running; " +
			"run after every service runs this release",
		Flags: []cli.Flag{
			&cli.IntFlag{
				Name:  "max-count",
				Usage: fmt.Sprintf("migrate at most `N` objects and stop (exit 1 if more may remain); without it, passes of %d until done", onlinemigrations.BatchSize),
			},
			&cli.GenericFlag{
				Name:  "option",
				Usage: "`MIGRATION.KEY=VALUE` passed to one migration (repeatable)",
				Value: &repeatedFlag{},
			},
		},
		Action: func(c *cli.Context) error {
			var maxCount *int
			if c.IsSet("max-count") {
				n := c.Int("max-count")
				maxCount = &n
			}
			options := c.Generic("option").(*repeatedFlag).values
			return runDBSync(c, func(s *dbsync.Syncer, ctx context.Context) error {
				return s.OnlineDataMigrations(ctx, maxCount, options)
			})
		},
	}
}

// runDBSync loads the configuration, builds a Syncer and runs one command,
// turning its error into the dbsync exit code with a one-line message.
func runDBSync(c *cli.Context, cmd func(*dbsync.Syncer, context.Context) error) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	if migrationKeys, err = credentialKeys(cfg, slog.New(slog.DiscardHandler)); err != nil {
		return cli.Exit("dbsync: "+err.Error(), dbsync.ExitRefused)
	}
	migrationOptions = onlinemigrations.Options{LiveTimeout: cfg.Conductor.HeartbeatTimeout, Notes: c.App.ErrWriter}
	reg, err := onlineMigrations()
	if err != nil {
		return cli.Exit("dbsync: "+err.Error(), 1)
	}
	s := &dbsync.Syncer{
		Connection:     cfg.Database.Connection,
		Options:        dbOptions(cfg),
		Out:            c.App.Writer,
		Registry:       reg,
		ServiceTimeout: cfg.Conductor.HeartbeatTimeout,
		ForgetTimeout:  cfg.Default.ServiceForgetTimeout,
	}
	if f, ok := c.App.Writer.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.Report = onlinemigrations.NewBarReporter(f)
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	err = cmd(s, ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, dbsync.ErrIncomplete):
		return cli.Exit("", dbsync.ExitIncomplete) // already said on stdout, as ironic-dbsync
	}
	return cli.Exit(strings.Join(strings.Fields(err.Error()), " "), dbsync.ExitCode(err))
}

// dbsyncUsageError makes flag errors of dbsync and its commands exit 127,
// as ironic-dbsync's argument errors do.
func dbsyncUsageError(c *cli.Context, err error, _ bool) error {
	name := "dbsync"
	if c.Command != nil && c.Command.Name != name {
		name += " " + c.Command.Name
	}
	return cli.Exit(fmt.Sprintf("%s: %v", name, err), dbsync.ExitBadArguments)
}

// repeatedFlag collects every occurrence of a flag verbatim; unlike
// StringSliceFlag it never splits a value on commas.
type repeatedFlag struct{ values []string }

// Set records one occurrence (flag.Value).
func (r *repeatedFlag) Set(v string) error {
	r.values = append(r.values, v)
	return nil
}

// String lists the occurrences (flag.Value).
func (r *repeatedFlag) String() string { return strings.Join(r.values, " ") }
