package api

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"golang.org/x/crypto/bcrypt"
)

// TestLoginBackoff: a client that keeps failing is answered 429 with
// Retry-After and no password check while locked out; others are not
// affected; the right password after the lock-out passes and resets the
// count. The 401 and 429 access-log lines name the client and the user
// tried, never the password.
func TestLoginBackoff(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	clk := &struct{ t time.Time }{time.Unix(1_800_000_000, 0)}
	var logs bytes.Buffer
	checks := 0
	e := newEnv(t, func(d *Deps) {
		d.Auth = countingUsers{staticUsers{"admin": hash}, &checks}
		d.Now = func() time.Time { return clk.t }
		d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	try := func(addr, user, pw string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/nodes", nil)
		req.RemoteAddr = addr
		req.SetBasicAuth(user, pw)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	const attacker, other = "198.51.100.9:5555", "203.0.113.4:6666"
	for i := range htpasswd.FreeFailures + 1 {
		// Rotating user names does not help: the client is the key.
		if rec := try(attacker, "user"+string(rune('a'+i)), "guess-secret"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, rec.Code)
		}
	}
	before := checks
	rec := try(attacker, "admin", "pw")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("locked-out client: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if !strings.Contains(rec.Body.String(), "Too many failed logins") || checks != before {
		t.Fatalf("body %s, %d password checks while locked out", rec.Body, checks-before)
	}
	if rec := try(other, "admin", "pw"); rec.Code != http.StatusOK {
		t.Fatalf("another client: %d", rec.Code)
	}
	clk.t = clk.t.Add(htpasswd.LockBase)
	if rec := try(attacker, "admin", "pw"); rec.Code != http.StatusOK {
		t.Fatalf("right password after the lock-out: %d", rec.Code)
	}
	if rec := try(attacker, "admin", "bad"); rec.Code != http.StatusUnauthorized {
		t.Fatalf("the count did not start over: %d", rec.Code)
	}
	var line401, line429 string
	for l := range strings.Lines(logs.String()) {
		switch {
		case strings.Contains(l, "status=401") && line401 == "":
			line401 = l
		case strings.Contains(l, "status=429"):
			line429 = l
		}
	}
	for name, want := range map[string][]string{line401: {"client=198.51.100.9", "user=usera"}, line429: {"client=198.51.100.9", "user=admin"}} {
		for _, w := range want {
			if !strings.Contains(name, w) {
				t.Errorf("access log line %q lacks %q", name, w)
			}
		}
	}
	if strings.Contains(logs.String(), "guess-secret") {
		t.Error("a password reached the log")
	}
}

type countingUsers struct {
	staticUsers
	n *int
}

func (c countingUsers) Check(user, pw string) bool {
	*c.n++
	return c.staticUsers.Check(user, pw)
}
