package faults

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func htpasswdLine(t *testing.T, user, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return user + ":" + string(h) + "\n"
}

// replaceFile swaps path's content in one rename, as editors and
// configuration management do.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// basicStatus sends an authenticated request and returns the status.
func basicStatus(t *testing.T, method, url, body, user, password string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(user, password)
	res, err := (&http.Client{Timeout: requestTimeout}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// SIGHUP re-reads the htpasswd files of the REST API ([DEFAULT]
// http_basic_auth_user_file) and of the conductor's JSON-RPC server
// ([json_rpc] http_basic_auth_user_file): a user added works and a user
// removed is refused without a restart; a file that no longer loads is
// logged naming the option and the users loaded before stay in force.
func TestSIGHUPReloadsHtpasswd(t *testing.T) {
	dir := t.TempDir()
	apiUsers := writeFile(t, dir, "htpasswd", htpasswdLine(t, "alice", "alice-pw"))
	rpcUsers := writeFile(t, dir, "htpasswd-json-rpc", htpasswdLine(t, "alice", "alice-pw"))

	aio := allInOne(t, filepath.Join(dir, "aio.db"), "",
		"RIVET_DEFAULT_AUTH_STRATEGY=http_basic", "RIVET_DEFAULT_HTTP_BASIC_AUTH_USER_FILE="+apiUsers,
		"RIVET_JSON_RPC_AUTH_STRATEGY=noauth", // in process: no JSON-RPC
		"RIVET_CONDUCTOR_ENABLED_HARDWARE_TYPES=fake-hardware")
	apiURL := aio.api.base + "/v1/nodes"

	rpcPort := freePort(t)
	cdir := t.TempDir()
	conf := writeFile(t, cdir, "conductor.conf", fmt.Sprintf(`[DEFAULT]
host = 127.0.0.1
[database]
connection = sqlite:///%s
[conductor]
enabled_hardware_types = fake-hardware
plugin_dir = %s
graceful_shutdown_timeout = 5
[json_rpc]
host_ip = 127.0.0.1
port = %d
auth_strategy = http_basic
http_basic_auth_user_file = %s
username = client
password = client-pw
`, filepath.Join(cdir, "conductor.db"), cdir, rpcPort, rpcUsers))
	if out, err := rivet(t, nil, "--config-file", conf, "dbsync", "create-schema"); err != nil {
		t.Fatalf("create-schema: %v\n%s", err, out)
	}
	cond := startProc(t, "rivet conductor", nil, rivetBin, "--config-file", conf, "conductor")
	rpcURL := fmt.Sprintf("http://127.0.0.1:%d/", rpcPort)
	const rpcBody = `{"jsonrpc":"2.0","method":"get_driver_properties","params":{"driver_name":"fake-hardware"},"id":1}`
	waitUntil(t, 90*time.Second, "JSON-RPC server up", func() bool {
		cond.running(t)
		res, err := http.Post(rpcURL, "application/json", strings.NewReader(rpcBody))
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusUnauthorized
	})

	type check struct {
		name, method, url, body, file string
		p                             *proc
	}
	servers := []check{
		{"REST API", http.MethodGet, apiURL, "", apiUsers, aio.proc},
		{"JSON-RPC", http.MethodPost, rpcURL, rpcBody, rpcUsers, cond},
	}
	// accepted reports whether the server lets user in (any answer but 401).
	accepted := func(c check, user, pw string) bool {
		return basicStatus(t, c.method, c.url, c.body, user, pw) != http.StatusUnauthorized
	}
	for _, c := range servers {
		if !accepted(c, "alice", "alice-pw") || accepted(c, "bob", "bob-pw") {
			t.Fatalf("%s before any reload: alice must get in, bob must not", c.name)
		}
		replaceFile(t, c.file, htpasswdLine(t, "bob", "bob-pw"))
		c.p.signal(t, syscall.SIGHUP)
	}
	for _, c := range servers {
		waitUntil(t, 10*time.Second, c.name+" accepting bob after SIGHUP", func() bool { return accepted(c, "bob", "bob-pw") })
		if accepted(c, "alice", "alice-pw") {
			t.Errorf("%s: alice, removed from the file, still gets in after the reload", c.name)
		}
		replaceFile(t, c.file, "bob:{SHA}not-bcrypt\n")
		c.p.signal(t, syscall.SIGHUP)
	}
	options := map[string]string{"REST API": "[DEFAULT] http_basic_auth_user_file", "JSON-RPC": "[json_rpc] http_basic_auth_user_file"}
	for _, c := range servers {
		waitUntil(t, 10*time.Second, c.name+" logging the bad file", func() bool {
			return strings.Contains(c.p.log.String(), "htpasswd reload failed")
		})
		var line string
		for l := range strings.Lines(c.p.log.String()) {
			if strings.Contains(l, "htpasswd reload failed") {
				line = l
			}
		}
		if !strings.Contains(line, options[c.name]) || !strings.Contains(line, "only bcrypt") {
			t.Errorf("%s: the reload error does not name the option and the problem: %s", c.name, line)
		}
		if !accepted(c, "bob", "bob-pw") {
			t.Errorf("%s: bob refused after a bad file was reloaded; the previous users must stay", c.name)
		}
		c.p.running(t)
	}
}
