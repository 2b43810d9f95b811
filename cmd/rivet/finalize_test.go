package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// finalizeEnv is a migrated SQLite database and a config file for the
// services over it.
func finalizeEnv(t *testing.T) (conf string, dbh *db.DB) {
	t.Helper()
	conn := dbtest.Connection(t, db.SQLite)
	dbh, err := db.Open(t.Context(), conn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbh.Close() })
	m, err := migrations.NewMigrator(dbh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	free := func() int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	dir := t.TempDir()
	conf = filepath.Join(dir, "rivet.conf")
	text := fmt.Sprintf("[DEFAULT]\nhost = node-a\n[database]\nconnection = %s\n[api]\nhost_ip = 127.0.0.1\nport = %d\n"+
		"[json_rpc]\nhost_ip = 127.0.0.1\nport = %d\n[conductor]\nenabled_hardware_types = no-such-hardware\nplugin_dir = %s\n",
		conn, free(), free(), dir)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf, dbh
}

// assertNothingOnline fails when a service or conductor of node-a is
// still registered as online.
func assertNothingOnline(t *testing.T, dbh *db.DB) {
	t.Helper()
	live, err := dbh.LiveServices(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range live {
		if s.Hostname == "node-a" {
			t.Errorf("%s is still online after the refusal", s.Name())
		}
	}
	conds, err := dbh.LiveConductors(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conds {
		t.Errorf("conductor %s is still online after the refusal", c.Hostname)
	}
}

// After the cluster was finalized at a newer release, rivet api, rivet
// conductor and rivet all-in-one refuse to start, in one line naming both
// releases, and leave nothing online.
func TestServicesRefuseToStartBelowTheFinalizedRelease(t *testing.T) {
	for _, cmd := range []string{"api", "conductor", "all-in-one"} {
		t.Run(cmd, func(t *testing.T) {
			conf, dbh := finalizeEnv(t)
			if _, _, err := dbh.AdvanceFinalizedRelease(context.Background(), "9.9.0", 99); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runCLI(t, "--config-file", conf, cmd)
			name := map[string]string{"api": "rivet-api", "conductor": "rivet-conductor", "all-in-one": "rivet all-in-one"}[cmd]
			want := fmt.Sprintf("%s: %s runs release %s (service version %d) but the cluster was finalized at release 9.9.0 (service version 99); "+
				"services older than the finalized release cannot read its data: run 9.9.0 or newer",
				cmd, name, release.Current, release.Default().Head().ServiceVersion)
			if code != 1 || !strings.Contains(errOut, want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, errOut, want)
			}
			assertNothingOnline(t, dbh)
		})
	}
}

// A new binary started unpinned beside a live service of the previous
// release is refused and told which pin to set.
func TestAPIRefusesAnUnpinnedStartBesideAnOlderService(t *testing.T) {
	tb := dbtest.Releases(t)
	releaseTable = func() *release.Table { return tb }
	t.Cleanup(func() { releaseTable = release.Default })
	// The previous release: the last cut one, one step below HEAD.
	prev := tb.Releases()[len(tb.Releases())-1]
	if prev.ServiceVersion == tb.Head().ServiceVersion {
		t.Skipf("HEAD has release %s's service version: nothing tells them apart yet", prev.Version)
	}
	conf, dbh := finalizeEnv(t)
	old := prev.Version + ".0"
	if _, err := dbh.RegisterService(t.Context(), db.ServiceRegistration{Hostname: "node-b", Binary: db.BinaryConductor,
		Release: old, ServiceVersion: prev.ServiceVersion}); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "--config-file", conf, "api")
	want := "api: this rivet-api would use release " + release.Current + " (service version " + strconv.Itoa(tb.Head().ServiceVersion) + ") but rivet-conductor on node-b runs release " + old +
		" (service version " + strconv.Itoa(prev.ServiceVersion) + "), which cannot read what " + release.Current + " writes: set [DEFAULT] pin_release_version = " + prev.Version + " (or auto)"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, errOut, want)
	}
	assertNothingOnline(t, dbh)
	if fr, err := dbh.FinalizedRelease(t.Context()); err != nil || fr != nil {
		t.Fatalf("a refused start moved the finalized release: %+v, %v", fr, err)
	}
}
