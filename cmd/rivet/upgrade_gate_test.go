package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// gateEnv is a SQLite database made by `rivet dbsync create-schema`, with a
// config file over it, and the database opened.
func gateEnv(t *testing.T) (conf string, dbh *db.DB) {
	t.Helper()
	dir := t.TempDir()
	conf = filepath.Join(dir, "rivet.conf")
	conn := "sqlite:///" + filepath.Join(dir, "r.db")
	if err := os.WriteFile(conf, []byte("[database]\nconnection = "+conn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "--config-file", conf, "dbsync", "create-schema"); code != 0 {
		t.Fatalf("create-schema: exit %d: %s", code, errOut)
	}
	dbh, err := db.Open(t.Context(), conn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbh.Close() })
	return conf, dbh
}

// Issue 23 A, as the operator met it: at step 2.2 (every service on the
// new release, pinned to 0.1; finalized at 0.1) `rivet upgrade check` used
// to advise running the online data migrations, and `rivet dbsync
// online-data-migrations` exited 0 having moved Node rows 1.0 → 1.1, which
// a 0.1 API then failed to read (500). Now check says they wait for step 3
// and the command exits 2 naming each pinned service, changing nothing.
func TestOnlineMigrationsRefusedAtStep22(t *testing.T) {
	conf, dbh := gateEnv(t)
	ctx := context.Background()
	tb := release.Default()
	r01, ok := tb.Lookup("0.1")
	if !ok {
		t.Fatal("no release 0.1")
	}
	for _, s := range []db.ServiceRegistration{
		{Hostname: "cond-1", Binary: db.BinaryConductor, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: "0.1"},
		{Hostname: "api-1", Binary: db.BinaryAPI, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: "0.1"},
	} {
		if _, err := dbh.RegisterService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := dbh.AdvanceFinalizedRelease(ctx, r01.Release(), r01.ServiceVersion); err != nil {
		t.Fatal(err)
	}
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	pin, _ := tb.ParsePin("0.1")
	s := db.NewStore(dbh, reg, release.NewPinner(tb, pin))
	for i := range 2 {
		obj, _ := reg.New("Node")
		n := obj.(*objects.Node)
		n.UUID, n.Driver = fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i), "fake-hardware"
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}

	_, out, _ := runCLI(t, "--config-file", conf, "upgrade", "check")
	if strings.Contains(out, "Run `rivet dbsync online-data-migrations`") {
		t.Errorf("upgrade check at step 2.2 advises the online migrations:\n%s", out)
	}
	code, stdout, stderr := runCLI(t, "--config-file", conf, "dbsync", "online-data-migrations")
	if code != 2 {
		t.Errorf("online-data-migrations at step 2.2: exit %d, want 2\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, want := range []string{"rivet-api on api-1 (release " + release.Current, "rivet-conductor on cond-1", "pinned to 0.1"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not name %q: %s", want, stderr)
		}
	}
	if n, err := dbh.Bun().NewSelect().Table(db.TableNodes).Where("version = ?", "1.0").Count(ctx); err != nil || n != 2 {
		t.Errorf("%d node rows left at 1.0 (%v), want 2", n, err)
	}
	if fr, err := dbh.FinalizedRelease(ctx); err != nil || fr.ServiceVersion != r01.ServiceVersion {
		t.Errorf("finalized release after the refusal: %+v %v", fr, err)
	}
}

// rivet upgrade forget removes a quiet service and says what auto now
// resolves to; it refuses a live service, an unregistered one and bad
// arguments; status shows a quiet service as unknown.
func TestUpgradeForget(t *testing.T) {
	conf, dbh := gateEnv(t)
	ctx := context.Background()
	tb := release.Default()
	r01, _ := tb.Lookup("0.1")
	for _, s := range []db.ServiceRegistration{
		{Hostname: "api-old", Binary: db.BinaryAPI, Release: "0.1.1", ServiceVersion: r01.ServiceVersion},
		{Hostname: "api-new", Binary: db.BinaryAPI, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: "auto"},
	} {
		if _, err := dbh.RegisterService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dbh.Bun().NewUpdate().Model((*db.Service)(nil)).Set("updated_at = ?", time.Now().Add(-10*time.Minute)).
		Where("hostname = ?", "api-old").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runCLI(t, "--config-file", conf, "upgrade", "status")
	if !strings.Contains(out, "unknown") || !strings.Contains(out, "rivet upgrade forget BINARY HOST") ||
		!strings.Contains(out, "would resolve to: "+r01.Label()) {
		t.Errorf("status with a quiet 0.1 API:\n%s", out)
	}
	tests := []struct {
		args   []string
		code   int
		output string
	}{
		{[]string{"rivet-api"}, 127, "want BINARY HOST"},
		{[]string{"scheduler", "api-old"}, 127, `unknown binary "scheduler"`},
		{[]string{"api", "nowhere"}, 2, "no rivet-api on nowhere is registered"},
		{[]string{"api", "api-new"}, 2, "rivet-api on api-new is live"},
		{[]string{"api", "api-old"}, 0, "Forgot rivet-api on api-old (release 0.1.1, service version 1, unknown"},
		{[]string{"api", "api-old"}, 2, "no rivet-api on api-old is registered"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, append([]string{"--config-file", conf, "upgrade", "forget"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.output) {
			t.Errorf("upgrade forget %v: exit %d\nstdout %s\nstderr %s\nwant exit %d and %q", tc.args, code, stdout, stderr, tc.code, tc.output)
		}
		if code == 0 && !strings.Contains(stdout, "auto now resolves to: HEAD") {
			t.Errorf("forget does not say where auto goes: %s", stdout)
		}
	}
}
