package main

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"golang.org/x/crypto/bcrypt"
)

// [api] http_basic_projects_file is loaded with the htpasswd file: a
// listed user is scoped (chassis are the system's: 403), an unlisted one
// is not; a malformed file stops the API naming the option and the line.
func TestAPIWiringProjectsFile(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	users, projects := filepath.Join(dir, "htpasswd"), filepath.Join(dir, "projects")
	if err := os.WriteFile(users, []byte("admin:"+string(hash)+"\nalice:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(projects, []byte("# tenants\nalice:p1:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Default.AuthStrategy, cfg.Default.HTTPBasicAuthUserFile, cfg.API.HTTPBasicProjectsFile = "http_basic", users, projects
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	build := func() error {
		h, err := buildAPI(t.Context(), cfg, dbtest.Open(t, db.SQLite), reg, release.NewPinner(release.Default(), release.Pin{}), slog.New(slog.DiscardHandler))
		if err != nil {
			return err
		}
		for user, want := range map[string]int{"admin": 200, "alice": 403} {
			req := httptest.NewRequest("GET", "/v1/chassis", nil)
			req.SetBasicAuth(user, "pw")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != want {
				t.Errorf("%s GET /v1/chassis: %d, want %d", user, rec.Code, want)
			}
		}
		return nil
	}
	if err := build(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(projects, []byte("alice:p1:owner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = build()
	if err == nil || !strings.Contains(err.Error(), "[api] http_basic_projects_file") || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a malformed projects file: %v", err)
	}
}
