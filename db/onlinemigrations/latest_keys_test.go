package onlinemigrations

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestUpdateToLatestVersionsKeepsCredentialsEncrypted: rewriting an old
// node row decrypts and re-encrypts its credentials with the services'
// keys; without them the migration stops, naming the key id.
func TestUpdateToLatestVersionsKeepsCredentialsEncrypted(t *testing.T) {
	ctx := context.Background()
	const pw = "Tern-migration-canary-3307"
	keys, err := keyring.Parse([]byte("mk1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("m", 32)))))
	if err != nil {
		t.Fatal(err)
	}
	dbh := dbtest.Open(t, db.SQLite)
	reg, tb := dbtest.Registry(t), dbtest.Releases(t)
	pin, _ := tb.ParsePin("0.1")
	s := db.NewStore(dbh, reg, release.NewPinner(tb, pin)).WithKeyring(keys)
	obj, _ := reg.New("Node")
	n := obj.(*objects.Node)
	n.UUID, n.Driver, n.DriverInfo = "00000000-0000-0000-0000-000000000001", "ipmi", map[string]any{"ipmi_password": pw}
	if err := s.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	run := func(keys *keyring.Keyring) error {
		m, err := UpdateToLatestVersions(reg, tb.Head(), keys)
		if err != nil {
			t.Fatal(err)
		}
		r := &Registry{}
		if err := r.Register(m); err != nil {
			t.Fatal(err)
		}
		_, err = (&Runner{DB: dbh, Registry: r, Report: LineReporter{W: &strings.Builder{}}}).Run(ctx, 0, nil)
		return err
	}
	if err := run(nil); err == nil || !strings.Contains(err.Error(), `"mk1"`) || strings.Contains(err.Error(), pw) {
		t.Fatalf("without keys: %v, want an error naming key id mk1", err)
	}
	if err := run(keys); err != nil {
		t.Fatal(err)
	}
	var raw, version string
	if err := dbh.Bun().NewSelect().Table(db.TableNodes).Column("driver_info", "version").Scan(ctx, &raw, &version); err != nil {
		t.Fatal(err)
	}
	if version != "1.2" || strings.Contains(raw, pw) || !strings.Contains(raw, keyring.Prefix+"mk1:") {
		t.Fatalf("after migration: version %s, driver_info %s", version, raw)
	}
}
