package db_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// credPassword is distinctive so that finding it anywhere is a leak.
const credPassword = "Zq9-credential-canary-7731"

// testKeys builds a keyring from ids, each with a key derived from its id;
// the first encrypts.
func testKeys(t testing.TB, ids ...string) *keyring.Keyring {
	t.Helper()
	var b strings.Builder
	for _, id := range ids {
		key := []byte(strings.Repeat(id, 32))[:32]
		fmt.Fprintf(&b, "%s:%s\n", id, base64.StdEncoding.EncodeToString(key))
	}
	k, err := keyring.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func latestStore(t testing.TB, dbh *db.DB) (*db.Store, *objects.Registry) {
	t.Helper()
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	return db.NewStore(dbh, reg, release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})), reg
}

func rawDriverInfo(t testing.TB, dbh *db.DB, uuid string) string {
	t.Helper()
	var s string
	if err := dbh.Bun().NewSelect().Table(db.TableNodes).Column("driver_info").Where("uuid = ?", uuid).Scan(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCredentialsEncryptedAtRest: secret driver_info values round-trip
// through the Store as plaintext, while the row holds only envelopes of
// the current key, nested secrets and non-string secrets included.
func TestCredentialsEncryptedAtRest(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		plain, reg := latestStore(t, dbh)
		s := plain.WithKeyring(testKeys(t, "k1"))
		info := map[string]any{
			"redfish_address": "https://10.0.0.9", "redfish_username": "admin", "redfish_password": credPassword,
			"snmp_priv_key": json.Number("1234567"), "nested": map[string]any{"auth_token": credPassword + "-tok"},
			"list": []any{map[string]any{"secret": credPassword + "-l"}}, "ipmi_password": nil,
		}
		n := newNode(t, reg, "c-01")
		n.DriverInfo = info
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		raw := rawDriverInfo(t, dbh, n.UUID)
		if strings.Contains(raw, credPassword) || strings.Contains(raw, "1234567") {
			t.Fatalf("a secret is in the raw row: %s", raw)
		}
		if got := strings.Count(raw, keyring.Prefix+"k1:"); got != 4 {
			t.Errorf("raw row has %d envelopes of k1, want 4: %s", got, raw)
		}
		if !strings.Contains(raw, "https://10.0.0.9") || !strings.Contains(raw, `"admin"`) {
			t.Errorf("non-secret values should stay readable: %s", raw)
		}
		got, err := s.GetNode(ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(info, got.DriverInfo); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
		// A save re-seals; the object in memory stays plaintext.
		got.DriverInfo["redfish_password"] = credPassword + "-2"
		if err := s.Save(ctx, got); err != nil {
			t.Fatal(err)
		}
		if got.DriverInfo["redfish_password"] != credPassword+"-2" {
			t.Errorf("save changed the object in memory: %v", got.DriverInfo["redfish_password"])
		}
		if raw := rawDriverInfo(t, dbh, n.UUID); strings.Contains(raw, credPassword) {
			t.Fatalf("a secret is in the raw row after save: %s", raw)
		}
	})
}

// TestCredentialsWithoutKey: with no key the row holds what it was given,
// and an envelope cannot be read without its key: the error names the key
// id and the driver_info key, never the value.
func TestCredentialsWithoutKey(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		plain, reg := latestStore(t, dbh)

		n := newNode(t, reg, "c-02")
		n.DriverInfo = map[string]any{"ipmi_password": credPassword}
		if err := plain.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		if raw := rawDriverInfo(t, dbh, n.UUID); !strings.Contains(raw, credPassword) {
			t.Errorf("without a key the value should be stored as given: %s", raw)
		}

		sealed := newNode(t, reg, "c-03")
		sealed.DriverInfo = map[string]any{"ipmi_password": credPassword}
		if err := plain.WithKeyring(testKeys(t, "gone")).Create(ctx, sealed); err != nil {
			t.Fatal(err)
		}
		for name, s := range map[string]*db.Store{"no key": plain, "other key": plain.WithKeyring(testKeys(t, "k1"))} {
			t.Run(name, func(t *testing.T) {
				_, err := s.GetNode(ctx, sealed.UUID)
				if !db.IsUnknownKey(err) {
					t.Fatalf("err = %v, want an unknown key error", err)
				}
				msg := err.Error()
				for _, want := range []string{`"gone"`, "ipmi_password", sealed.UUID} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not name %s", msg, want)
					}
				}
				if strings.Contains(msg, credPassword) {
					t.Errorf("error leaks the value: %s", msg)
				}
			})
		}
		// The old key still decrypts while it is in the file after the new.
		if _, err := plain.WithKeyring(testKeys(t, "k1", "gone")).GetNode(ctx, sealed.UUID); err != nil {
			t.Errorf("read with the old key second: %v", err)
		}
	})
}
