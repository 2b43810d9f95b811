package sim

import (
	"net/http"
	"testing"
	"time"
)

func TestAuthRequired(t *testing.T) {
	g := newRig(t, Options{Systems: 1})
	paths := []string{
		"/redfish/v1/Systems", "/redfish/v1/Systems/node-0", "/redfish/v1/Systems/node-0/Processors",
		"/redfish/v1/Managers/BMC-node-0", "/redfish/v1/Managers/BMC-node-0/VirtualMedia/Cd",
		"/redfish/v1/Chassis/node-0", "/redfish/v1/SessionService", "/redfish/v1/SessionService/Sessions",
		"/redfish/v1/AccountService", "/redfish/v1/Nope",
	}
	creds := map[string]auth{
		"none":           {},
		"wrong password": {user: DefaultUsername, pass: "nope"},
		"wrong user":     {user: "root", pass: DefaultPassword},
		"bogus token":    {token: "deadbeef"},
		// A token is judged alone: good basic credentials do not rescue a bad one.
		"bogus token with basic": {user: DefaultUsername, pass: DefaultPassword, token: "deadbeef"},
	}
	for name, a := range creds {
		t.Run(name, func(t *testing.T) {
			for _, p := range paths {
				r := g.do(http.MethodGet, p, a, nil)
				r.want(t, http.StatusUnauthorized, "NoValidSession")
			}
			for _, p := range []string{"/redfish", "/redfish/v1", "/redfish/v1/"} {
				g.do(http.MethodGet, p, a, nil).want(t, http.StatusOK, "")
			}
			g.do(http.MethodPost, "/redfish/v1/Systems/node-0/Actions/ComputerSystem.Reset", a,
				map[string]string{"ResetType": "On"}).want(t, http.StatusUnauthorized, "NoValidSession")
		})
	}
	if st, _ := g.sim.System("node-0"); st.Resets != 0 {
		t.Errorf("an unauthenticated reset went through: %+v", st)
	}
}

// login posts credentials and returns the token and the session path.
func (g *rig) login(user, pass string) resp {
	g.t.Helper()
	return g.do(http.MethodPost, sessionsPath, auth{}, map[string]string{"UserName": user, "Password": pass})
}

func TestSessionLifecycle(t *testing.T) {
	g := newRig(t, Options{Systems: 1})
	r := g.login(DefaultUsername, DefaultPassword)
	r.want(t, http.StatusCreated, "")
	tok, loc := r.header.Get("X-Auth-Token"), r.header.Get("Location")
	if tok == "" || loc != sessionsPath+"/"+str(r.body, "Id") || str(r.body, "UserName") != DefaultUsername {
		t.Fatalf("login answer: headers %v body %v", r.header, r.body)
	}
	withToken := auth{token: tok}
	g.do(http.MethodGet, "/redfish/v1/Systems/node-0", withToken, nil).want(t, http.StatusOK, "")
	list := g.do(http.MethodGet, sessionsPath, withToken, nil)
	if ids := odataIDs(list.body); len(ids) != 1 || ids[0] != loc {
		t.Errorf("session list %v, want [%s]", ids, loc)
	}
	g.do(http.MethodGet, loc, withToken, nil).want(t, http.StatusOK, "")
	g.do(http.MethodDelete, loc, withToken, nil).want(t, http.StatusNoContent, "")
	g.do(http.MethodGet, "/redfish/v1/Systems/node-0", withToken, nil).want(t, http.StatusUnauthorized, "NoValidSession")
	g.do(http.MethodDelete, loc, admin, nil).want(t, http.StatusNotFound, "ResourceMissingAtURI")
	if n := g.sim.SessionCount(); n != 0 {
		t.Errorf("%d sessions left after logout", n)
	}
}

func TestLoginErrors(t *testing.T) {
	g := newRig(t, Options{Systems: 1})
	tests := map[string]struct {
		body   any
		status int
		id     string
	}{
		"wrong password":   {map[string]string{"UserName": DefaultUsername, "Password": "x"}, 401, "NoValidSession"},
		"missing password": {map[string]string{"UserName": DefaultUsername}, 400, "CreateFailedMissingReqProperties"},
		"unknown property": {map[string]any{"UserName": DefaultUsername, "Password": DefaultPassword, "Role": "x"}, 400, "PropertyUnknown"},
		"number password":  {map[string]any{"UserName": DefaultUsername, "Password": 1}, 400, "PropertyValueTypeError"},
		"malformed":        {"{", 400, "MalformedJSON"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g.do(http.MethodPost, sessionsPath, auth{}, tc.body).want(t, tc.status, tc.id)
		})
	}
	if n := g.sim.SessionCount(); n != 0 {
		t.Errorf("failed logins created %d sessions", n)
	}
}

func TestSessionLimit(t *testing.T) {
	g := newRig(t, Options{Systems: 1, SessionLimit: 2})
	first := g.login(DefaultUsername, DefaultPassword)
	first.want(t, http.StatusCreated, "")
	g.login(DefaultUsername, DefaultPassword).want(t, http.StatusCreated, "")
	over := g.login(DefaultUsername, DefaultPassword)
	over.want(t, http.StatusServiceUnavailable, "SessionLimitExceeded")
	if over.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	// Logging one out makes room again.
	g.do(http.MethodDelete, first.header.Get("Location"), auth{token: first.header.Get("X-Auth-Token")}, nil).want(t, http.StatusNoContent, "")
	g.login(DefaultUsername, DefaultPassword).want(t, http.StatusCreated, "")
}

func TestSessionExpiry(t *testing.T) {
	clock := newClock()
	g := newRig(t, Options{Systems: 1, SessionTimeout: time.Minute, SessionLimit: 1, Now: clock.Now})
	tok := g.login(DefaultUsername, DefaultPassword).header.Get("X-Auth-Token")
	a := auth{token: tok}
	// Use keeps it alive: 50 s idle, a request, 50 s idle is still fine.
	clock.Add(50 * time.Second)
	g.do(http.MethodGet, "/redfish/v1/Systems", a, nil).want(t, http.StatusOK, "")
	clock.Add(50 * time.Second)
	g.do(http.MethodGet, "/redfish/v1/Systems", a, nil).want(t, http.StatusOK, "")
	// A full minute idle expires it, which also frees its slot under the limit.
	clock.Add(time.Minute)
	g.do(http.MethodGet, "/redfish/v1/Systems", a, nil).want(t, http.StatusUnauthorized, "NoValidSession")
	g.login(DefaultUsername, DefaultPassword).want(t, http.StatusCreated, "")
}
