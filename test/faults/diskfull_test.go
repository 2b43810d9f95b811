package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to check the file the service wrote

	"github.com/rivetmetal/rivet/test/testenv"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and unmounts
// it when the test ends (after the processes using it are killed).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Unavailable(t, fmt.Sprintf("cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): %v: %s", err, strings.TrimSpace(string(out))))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file that leaves about spare bytes free on dir's file
// system and returns its path.
func fill(t *testing.T, dir string, spare int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := filepath.Join(dir, "filler")
	if free > spare {
		if err := os.WriteFile(path, make([]byte, free-spare), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// The SQLite database of an all-in-one fills its disk: writes fail with
// 507 and Ironic's body saying so (the CLI adds what to do), reads go on,
// the service stays up, nothing acknowledged is lost and the file is
// intact; once space is freed, writes succeed again without a restart.
func TestSQLiteDiskFull(t *testing.T) {
	mnt := mountTmpfs(t, 8<<20)
	dbPath := filepath.Join(mnt, "rivet.db")
	aio := allInOne(t, dbPath, "", "RIVET_CONDUCTOR_ENABLED_HARDWARE_TYPES=fake-hardware")
	api := aio.api
	filler := fill(t, mnt, 256<<10)

	extra := map[string]any{"padding": strings.Repeat("x", 4096)}
	var acked []string
	var full reply
	for i := 0; ; i++ {
		if i == 2000 {
			t.Fatalf("2000 nodes written to a nearly full disk and no write failed")
		}
		name := fmt.Sprintf("full-%d", i)
		r, err := api.do(http.MethodPost, "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": name, "extra": extra})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if r.status == http.StatusCreated {
			acked = append(acked, name)
			continue
		}
		full = r
		break
	}
	t.Logf("%d nodes written before the disk filled; then: %d %s", len(acked), full.status, full.fault())
	if full.status != http.StatusInsufficientStorage || !strings.Contains(full.fault(), "out of storage space") {
		t.Fatalf("write on a full disk: %s, want 507 with Ironic's body saying the database is out of space", full)
	}
	out, err := rivet(t, []string{"RIVET_URL=" + api.base}, "node", "create", "driver=fake-hardware", "name=from-the-cli")
	var exit *exec.ExitError
	if err == nil || !errors.As(err, &exit) || exit.ExitCode() != 1 ||
		!strings.Contains(out, "out of storage space") || !strings.Contains(out, "free disk space") {
		t.Errorf("rivet node create on a full disk: %v\n%s\nwant exit 1 and a message saying what to do", err, out)
	}
	t.Logf("the CLI says: %s", strings.TrimSpace(out))
	api.must(t, http.StatusOK, http.MethodGet, "/v1/nodes?limit=5", nil)
	aio.running(t)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "writes succeeding once space is freed", func() bool {
		r, err := api.do(http.MethodPost, "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": "after-full"})
		return err == nil && r.status == http.StatusCreated
	})
	acked = append(acked, "after-full")

	dbh, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer dbh.Close()
	ctx := context.Background()
	var check string
	if err := dbh.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check after the disk was full: %q, %v", check, err)
	}
	rows, err := dbh.QueryContext(ctx, "SELECT name FROM nodes")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stored []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, name)
	}
	for _, name := range acked {
		if !slices.Contains(stored, name) {
			t.Errorf("acknowledged node %s is not in the database", name)
		}
	}
	aio.running(t)
}
