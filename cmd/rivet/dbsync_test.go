package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/test/testenv"
)

// dbsyncConfig writes a config file whose [database] connection is conn.
func dbsyncConfig(t *testing.T, conn string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rivet.conf")
	if err := os.WriteFile(p, []byte("[database]\nconnection = "+conn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkOneLine fails t unless stderr is one "rivet: …" line without a
// stack trace or the secret.
func checkOneLine(t *testing.T, stderr, secret string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "rivet: ") {
		t.Errorf("stderr is not one line: %q", stderr)
	}
	for _, bad := range []string{"goroutine", "panic", secret} {
		if bad != "" && strings.Contains(stderr, bad) {
			t.Errorf("stderr contains %q: %q", bad, stderr)
		}
	}
}

func TestDBSyncConnectionErrors(t *testing.T) {
	tests := map[string]struct {
		conn string
		want string
	}{
		"unreachable postgres": {"postgresql://u:s3cret@127.0.0.1:1/x", "database postgresql://u:***@127.0.0.1:1/x: cannot connect: "},
		"unreachable mysql":    {"mysql://u:s3cret@127.0.0.1:1/x", "database mysql://u:***@127.0.0.1:1/x: cannot connect: "},
		"malformed":            {"postgresql://u:s3cret@[::1/x", "database postgresql://u:***@[::1/x: malformed URL: missing ']' in host"},
		"unknown scheme":       {"oracle://u:s3cret@db/x", "is not a supported database URL"},
		"sqlite missing dir":   {"sqlite:////nonexistent-rivet-dir/r.db", "cannot open /nonexistent-rivet-dir/r.db"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := dbsyncConfig(t, tc.conn)
			for _, cmd := range []string{"upgrade", "version", "online-data-migrations"} {
				code, _, stderr := runCLI(t, "--config-file", cfg, "dbsync", cmd)
				if code == 0 {
					t.Errorf("%s: exit 0", cmd)
				}
				checkOneLine(t, stderr, "s3cret")
				if !strings.Contains(stderr, tc.want) {
					t.Errorf("%s: stderr %q lacks %q", cmd, stderr, tc.want)
				}
			}
		})
	}
}

// TestDBSyncExitCodes runs the commands in order against one SQLite
// database and checks each exit code and message.
func TestDBSyncExitCodes(t *testing.T) {
	cfg := dbsyncConfig(t, "sqlite:///"+filepath.Join(t.TempDir(), "r.db"))
	last := lastMigration(t, db.SQLite)
	steps := []struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring of the one stderr line; "" means empty
	}{
		{[]string{"version"}, 0, "None\n", ""},
		{[]string{"create-schema"}, 0, "Created the schema", ""},
		{[]string{"create_schema"}, 2, "", "create-schema needs an empty database"},
		{[]string{"upgrade"}, 0, "The database schema is up to date (" + last + ")", ""},
		{nil, 0, "The database schema is up to date", ""},
		{[]string{"version"}, 0, last + "\n", ""},
		{[]string{"unlock"}, 0, "The migration lock was not held.", ""},
		{[]string{"online-data-migrations"}, 0, "Data migrations have completed.", ""},
		{[]string{"online-data-migrations", "--max-count", "0"}, 127, "", `"max-count" must be a positive value.`},
		{[]string{"online-data-migrations", "--max-count", "-3"}, 127, "", `"max-count" must be a positive value.`},
		{[]string{"online-data-migrations", "--max-count", "x"}, 127, "", `dbsync online-data-migrations: invalid value "x" for flag -max-count`},
		{[]string{"online_data_migrations", "--option", "foo"}, 127, "", "Malformed option foo"},
		{[]string{"online-data-migrations", "--option", "nope.k=v"}, 127, "", `unknown migration "nope"`},
		{[]string{"upgrade", "--bogus"}, 127, "", "dbsync upgrade: flag provided but not defined: -bogus"},
		{[]string{"--bogus"}, 127, "", "dbsync: flag provided but not defined: -bogus"},
		{[]string{"stamp"}, 127, "", `dbsync: unknown command "stamp"`},
	}
	for _, st := range steps {
		name := strings.Join(append([]string{"dbsync"}, st.args...), " ")
		code, stdout, stderr := runCLI(t, append([]string{"--config-file", cfg, "dbsync"}, st.args...)...)
		if code != st.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, st.code, stderr)
		}
		if !strings.Contains(stdout, st.stdout) {
			t.Errorf("%s: stdout %q lacks %q", name, stdout, st.stdout)
		}
		if st.stderr == "" {
			if stderr != "" {
				t.Errorf("%s: unexpected stderr %q", name, stderr)
			}
			continue
		}
		checkOneLine(t, stderr, "")
		if !strings.Contains(stderr, st.stderr) {
			t.Errorf("%s: stderr %q lacks %q", name, stderr, st.stderr)
		}
	}
	// As ironic-dbsync: the config file may follow the command's name.
	if code, stdout, stderr := runCLI(t, "dbsync", "--config-file", cfg, "version"); code != 0 || stdout != last+"\n" {
		t.Errorf("dbsync --config-file … version: exit %d, %q, %q", code, stdout, stderr)
	}
}

// lastMigration names dialect d's newest schema migration.
func lastMigration(t *testing.T, d db.Dialect) string {
	t.Helper()
	set, err := migrations.Set(d)
	if err != nil {
		t.Fatal(err)
	}
	sorted := set.Sorted()
	return sorted[len(sorted)-1].String()
}

// migrationsAfter lists, comma-separated as dbsync upgrade prints them,
// the migrations newer than the one named last (a release's schema).
func migrationsAfter(t *testing.T, d db.Dialect, last string) string {
	t.Helper()
	set, err := migrations.Set(d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range set.Sorted() {
		if m.String() > last {
			names = append(names, m.String())
		}
	}
	return strings.Join(names, ", ")
}

// TestDBSyncOnEveryDialect drives the CLI end to end on each database:
// create-schema, idempotent upgrade, a refused upgrade (exit 2) over a row
// this release cannot read, lock contention and unlock, and online data
// migrations returning 1 then 0.
func TestDBSyncOnEveryDialect(t *testing.T) {
	for _, d := range db.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			conn := dbtest.Connection(t, d)
			cfg := dbsyncConfig(t, conn)
			dbsyncCmd := func(args ...string) (int, string, string) {
				return runCLI(t, append([]string{"--config-file", cfg, "dbsync"}, args...)...)
			}
			expect := func(code int, stdout, stderr string, args ...string) {
				t.Helper()
				gotCode, gotOut, gotErr := dbsyncCmd(args...)
				if gotCode != code || !strings.Contains(gotOut, stdout) || !strings.Contains(gotErr, stderr) {
					t.Errorf("dbsync %s: exit %d, stdout %q, stderr %q; want exit %d, %q, %q",
						strings.Join(args, " "), gotCode, gotOut, gotErr, code, stdout, stderr)
				}
			}
			expect(0, "Created the schema", "", "create-schema")
			expect(0, "up to date", "", "upgrade")
			expect(0, "up to date", "", "upgrade")

			dbh, err := db.Open(ctx, conn, db.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer dbh.Close()
			for i, v := range []string{"1.0", "1.0", "1.0", "9.9"} {
				n := &db.Node{UUID: fmt.Sprintf("10000000-0000-0000-0000-%012d", i), Driver: "fake-hardware", Version: &v}
				if _, err := dbh.Bun().NewInsert().Model(n).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			expect(2, "", "table nodes has 1 row at version 9.9 (Node versions supported: 1.0, 1.1, 1.2)", "upgrade")
			expect(2, "", "table nodes has 1 row at version 9.9", "online-data-migrations")
			if _, err := dbh.Bun().NewDelete().Table("nodes").Where("version = '9.9'").Exec(ctx); err != nil {
				t.Fatal(err)
			}

			m, err := migrations.NewMigrator(dbh)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			expect(2, "", "another dbsync holds the migration lock since ", "upgrade")
			expect(0, "Released the migration lock held since ", "", "unlock")
			expect(0, "up to date", "", "upgrade")

			expect(1, "backfill_node_interfaces() migrated 2 of 3 objects.\nData migrations have not completed. Please re-run.\n", "",
				"online-data-migrations", "--max-count", "2")
			// Then update_to_latest_versions lifts the rows to HEAD's Node
			// (1.2, newer than the backfill's 1.1).
			expect(1, "backfill_node_interfaces() migrated 1 of 1 objects.\nupdate_to_latest_versions() migrated 1 of 3 objects.\n"+
				"Data migrations have not completed. Please re-run.\n", "", "online-data-migrations", "--max-count", "2")
			expect(1, "backfill_node_interfaces() migrated 0 of 0 objects.\nupdate_to_latest_versions() migrated 2 of 2 objects.\n"+
				"Data migrations have not completed. Please re-run.\n", "", "online-data-migrations", "--max-count", "2")
			expect(0, "backfill_node_interfaces() migrated 0 of 0 objects.\nupdate_to_latest_versions() migrated 0 of 0 objects.\n"+
				"Data migrations have completed.\n", "", "online-data-migrations", "--max-count", "2")
		})
	}
}

// TestDBSyncUpgradesA01Database: on each database, a schema that release
// 0.1's own rivet (built from its recorded commit) created, with rows as 0.1
// writes them (nodes at Node 1.0, no interface columns), takes `rivet dbsync
// upgrade` (the nullable columns arrive, the rows keep NULL), then
// `online-data-migrations --max-count 2` exits 1 then 0 and every node has
// its hardware type's interfaces at Node 1.1.
func TestDBSyncUpgradesA01Database(t *testing.T) {
	if testing.Short() {
		t.Skip("builds release 0.1 from git history")
	}
	rivet01 := filepath.Join(testenv.BuildRelease(t, "0.1", "./cmd/rivet"), "rivet")
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		conn := dbtest.Connection(t, d)
		cfg := dbsyncConfig(t, conn)
		if out, err := exec.Command(rivet01, "--config-file", cfg, "dbsync", "create-schema").CombinedOutput(); err != nil {
			t.Fatalf("0.1's rivet dbsync create-schema: %v\n%s", err, out)
		}
		dbh, err := db.Open(ctx, conn, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer dbh.Close()
		v10, enroll := "1.0", "enroll"
		for i, hw := range []string{"fake-hardware", "fake-hardware", "redfish"} {
			n := &db.Node{UUID: fmt.Sprintf("20000000-0000-0000-0000-%012d", i), Driver: hw, Version: &v10, ProvisionState: &enroll}
			// Only columns 0.1's nodes table has: later releases added more.
			q := dbh.Bun().NewInsert().Model(n).Column("uuid", "driver", "version", "provision_state", "driver_info",
				"driver_internal_info", "extra", "instance_info", "properties", "clean_step", "raid_config",
				"target_raid_config", "maintenance", "console_enabled", "conductor_group", "reservation_epoch")
			if _, err := q.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		expect := func(code int, stdout string, args ...string) {
			t.Helper()
			gotCode, gotOut, gotErr := runCLI(t, append([]string{"--config-file", cfg, "dbsync"}, args...)...)
			if gotCode != code || gotOut != stdout || gotErr != "" {
				t.Errorf("dbsync %s: exit %d, stdout %q, stderr %q; want exit %d, %q",
					strings.Join(args, " "), gotCode, gotOut, gotErr, code, stdout)
			}
		}
		expect(0, "Upgraded the database schema: applied "+migrationsAfter(t, d, dbtest.Release01Schema)+".\n", "upgrade")
		nulls, err := dbh.Bun().NewSelect().Table("nodes").Where("deploy_interface IS NULL AND version = '1.0'").Count(ctx)
		if err != nil || nulls != 3 {
			t.Fatalf("after upgrade: %d rows at 1.0 without interfaces, %v", nulls, err)
		}
		// No service is registered: the gate opens and, first, raises the
		// finalized release, so a 0.1 binary can no longer start on the rows.
		expect(1, "Finalized release advanced to "+release.Current+" (service version "+strconv.Itoa(release.Default().Head().ServiceVersion)+") before migrating: services older than it can no longer start.\n"+
			"backfill_node_interfaces() migrated 2 of 3 objects.\nData migrations have not completed. Please re-run.\n",
			"online-data-migrations", "--max-count", "2")
		expect(1, "backfill_node_interfaces() migrated 1 of 1 objects.\nupdate_to_latest_versions() migrated 1 of 3 objects.\n"+
			"Data migrations have not completed. Please re-run.\n", "online-data-migrations", "--max-count", "2")
		expect(1, "backfill_node_interfaces() migrated 0 of 0 objects.\nupdate_to_latest_versions() migrated 2 of 2 objects.\n"+
			"Data migrations have not completed. Please re-run.\n", "online-data-migrations", "--max-count", "2")
		expect(0, "backfill_node_interfaces() migrated 0 of 0 objects.\nupdate_to_latest_versions() migrated 0 of 0 objects.\n"+
			"Data migrations have completed.\n", "online-data-migrations", "--max-count", "2")

		var rows []db.Node
		if err := dbh.Bun().NewSelect().Model(&rows).OrderExpr("id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		want := map[string][2]string{"fake-hardware": {"fake", "fake"}, "redfish": {"redfish-virtual-media", "ramdisk"}}
		for _, r := range rows {
			w := want[r.Driver]
			if *r.Version != "1.2" || r.BootInterface == nil || *r.BootInterface != w[0] || r.DeployInterface == nil ||
				*r.DeployInterface != w[1] || r.NetworkInterface == nil || *r.NetworkInterface != "noop" {
				t.Errorf("%s node %s after the migrations: version %s, boot %v, deploy %v, network %v", r.Driver, r.UUID,
					*r.Version, r.BootInterface, r.DeployInterface, r.NetworkInterface)
			}
		}
		expect(0, "The database schema is up to date ("+lastMigration(t, d)+").\n", "upgrade")
	})
}
