package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/db"
)

// TestDBSyncRotateKey drives `rivet dbsync rotate-key` through the CLI:
// refused without a key, rewrites a plaintext password then finds nothing
// to do, and fails naming the key id when a key left the file too early.
func TestDBSyncRotateKey(t *testing.T) {
	dir := t.TempDir()
	conn := "sqlite:///" + filepath.Join(dir, "r.db")
	plainCfg := dbsyncConfig(t, conn)
	if code, _, stderr := runCLI(t, "--config-file", plainCfg, "dbsync", "create-schema"); code != 0 {
		t.Fatalf("create-schema: %s", stderr)
	}
	dbh, err := db.Open(context.Background(), conn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dbh.Close()
	v := "1.0"
	if _, err := dbh.Bun().NewInsert().Model(&db.Node{UUID: "00000000-0000-4000-8000-000000000001", Driver: "ipmi", Version: &v,
		DriverInfo: db.JSONObject{"ipmi_password": "pw-canary-4411"}}).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	keyFile := func(lines ...string) string {
		p := filepath.Join(t.TempDir(), "keys")
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	k1 := "k1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("1", 32)))
	k2 := "k2:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("2", 32)))
	withKeys := func(file string) string {
		p := filepath.Join(t.TempDir(), "rivet.conf")
		if err := os.WriteFile(p, []byte("[DEFAULT]\ncredential_key_file = "+file+"\n[database]\nconnection = "+conn+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	steps := []struct {
		name   string
		cfg    string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no key", plainCfg, nil, 2, "", "credential_key_file is not set"},
		{"bad batch", withKeys(keyFile(k1)), []string{"--batch-size", "0"}, 127, "", "--batch-size must be positive"},
		{"bad key file", withKeys(keyFile("k1:short")), nil, 2, "", "line 1: key \"k1\" is not the base64 of 32 bytes"},
		{"encrypts plaintext", withKeys(keyFile(k1)), nil, 0, "1 re-encrypted with key \"k1\"", ""},
		{"idempotent", withKeys(keyFile(k1)), nil, 0, "0 re-encrypted", ""},
		{"k1 gone too early", withKeys(keyFile(k2)), nil, 1, "", `key id "k1"`},
		{"rotates to k2", withKeys(keyFile(k2, k1)), nil, 0, "1 re-encrypted with key \"k2\"", ""},
	}
	for _, st := range steps {
		code, stdout, stderr := runCLI(t, append([]string{"--config-file", st.cfg, "dbsync", "rotate-key"}, st.args...)...)
		if code != st.code || !strings.Contains(stdout, st.stdout) || !strings.Contains(stderr, st.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", st.name, code, stdout, stderr, st.code, st.stdout, st.stderr)
		}
		if strings.Contains(stdout+stderr, "pw-canary-4411") {
			t.Errorf("%s: the password was printed", st.name)
		}
	}
	var raw string
	if err := dbh.Bun().NewSelect().Table(db.TableNodes).Column("driver_info").Scan(context.Background(), &raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "pw-canary-4411") || !strings.Contains(raw, keyring.Prefix+"k2:") {
		t.Errorf("driver_info after rotation = %s", raw)
	}
}
