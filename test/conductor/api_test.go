package conductor

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/test/testenv"
)

// startAPI runs `rivet api` on 127.0.0.1:port over the cluster's database,
// with env added to its environment, and waits until it answers GET /.
func (c *cluster) startAPI(port int, env ...string) *proc {
	t := c.t
	t.Helper()
	conf := writeConfig(t, "api", c.dbURL, 1)
	cmd := exec.Command(rivetBin, "--config-file", conf, "api")
	cmd.Env = append(append(os.Environ(), "RIVET_API_PORT="+strconv.Itoa(port)), env...)
	p := &proc{name: "api", conf: conf, cmd: cmd, log: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("api output:\n%s", p.log.String())
		}
	})
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	c.waitUntil(15*time.Second, "api serving", func() bool {
		select {
		case <-p.done:
			t.Fatalf("api exited at start: %v\n%s", p.err, p.log.String())
		default:
		}
		res, err := http.Get(url)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return p
}

// rest sends one request to a `rivet api` at base (http://host:port) at
// microversion 1.31, with basic credentials when user is set.
func rest(base, method, path, body, user, password string) (int, string, error) {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.31")
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, string(out), err
}

// mustREST is rest without credentials, failing t when no answer comes.
func mustREST(t *testing.T, base, method, path, body string) (int, string) {
	t.Helper()
	status, out, err := rest(base, method, path, body, "", "")
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, out
}
