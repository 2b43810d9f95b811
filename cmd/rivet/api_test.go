package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
	"golang.org/x/crypto/bcrypt"
)

func TestAPIRefusesAnOldSchema(t *testing.T) {
	t.Setenv("RIVET_DATABASE_CONNECTION", "sqlite:///"+filepath.Join(t.TempDir(), "empty.db"))
	var stdout, stderr bytes.Buffer
	code := run([]string{"rivet", "api"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "run `rivet dbsync upgrade`") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestAPIServesAndDrainsOnSIGTERM starts rivet api on a migrated database,
// checks a request carries a request id, and stops it with SIGTERM.
func TestAPIServesAndDrainsOnSIGTERM(t *testing.T) {
	migrated := dbtest.Connection(t, db.SQLite)
	dbh, err := db.Open(t.Context(), migrated, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrations.NewMigrator(dbh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	dbh.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Setenv("RIVET_DATABASE_CONNECTION", migrated)
	t.Setenv("RIVET_API_HOST_IP", "127.0.0.1")
	t.Setenv("RIVET_API_PORT", fmt.Sprint(port))
	t.Setenv("RIVET_API_GRACEFUL_SHUTDOWN_TIMEOUT", "5s")
	t.Setenv("RIVET_API_SHUTDOWN_DELAY", "3s")
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() { done <- run([]string{"rivet", "api"}, &bytes.Buffer{}, &stderr) }()
	url := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	var resp *http.Response
	for range 100 {
		if resp, err = http.Get(url); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("rivet api never answered: %v; stderr %s", err, stderr.String())
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Openstack-Request-Id"), "req-") {
		t.Fatalf("GET /v1: %d, request id %q", resp.StatusCode, resp.Header.Get("Openstack-Request-Id"))
	}
	check, err := db.Open(t.Context(), migrated, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if live, err := check.LiveServices(t.Context(), time.Minute); err != nil || len(live) != 1 || live[0].Binary != db.BinaryAPI {
		t.Errorf("live services while serving: %+v, %v", live, err)
	}
	health := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	if code := getStatus(t, health); code != http.StatusOK {
		t.Fatalf("GET /healthz while serving: %d", code)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// [api] shutdown_delay keeps the listener open with /healthz at 503.
	draining := false
	for range 100 {
		if code := getStatus(t, health); code == http.StatusServiceUnavailable {
			draining = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !draining {
		t.Fatal("GET /healthz never answered 503 after SIGTERM")
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rivet api did not stop on SIGTERM")
	}
	if live, err := check.LiveServices(t.Context(), time.Minute); err != nil || len(live) != 0 {
		t.Errorf("live services after stop: %+v, %v", live, err)
	}
}

func TestAPIWiringHTTPBasic(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(users, []byte("admin:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Default.AuthStrategy, cfg.Default.HTTPBasicAuthUserFile = "http_basic", users
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	h, err := buildAPI(t.Context(), cfg, dbtest.Open(t, db.SQLite), reg, release.NewPinner(release.Default(), release.Pin{}), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, pass string
		code       int
	}{{"", "", 401}, {"admin", "bad", 401}, {"admin", "pw", 200}} {
		req := httptest.NewRequest("GET", "/v1/nodes", nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("%s:%s → %d, want %d", tc.user, tc.pass, rec.Code, tc.code)
		}
	}
	cfg.Default.HTTPBasicAuthUserFile = filepath.Join(t.TempDir(), "missing")
	if _, err := buildAPI(t.Context(), cfg, dbtest.Open(t, db.SQLite), reg, release.NewPinner(release.Default(), release.Pin{}), slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a missing htpasswd file was accepted")
	}
}

func TestAPITLSOptions(t *testing.T) {
	if c, err := apiTLS(config.APIOpts{}); c != nil || err != nil {
		t.Errorf("disabled: %v, %v", c, err)
	}
	_, err := apiTLS(config.APIOpts{EnableSSLAPI: true, CertFile: "/nonexistent.pem", KeyFile: "/nonexistent.key"})
	if err == nil || !strings.Contains(err.Error(), "[api] cert_file") {
		t.Errorf("missing certificate: %v", err)
	}
}

// getStatus GETs url on a new connection and returns the status, failing
// t when the request cannot be made.
func getStatus(t *testing.T, url string) int {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
