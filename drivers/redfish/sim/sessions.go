package sim

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"
	"sync"
	"time"
)

const (
	sessionServicePath = "/redfish/v1/SessionService"
	sessionsPath       = sessionServicePath + "/Sessions"
)

// session is one login. The token is the secret; the id names the resource.
type session struct {
	id, token, user string
	lastUsed        time.Time
}

// sessionStore holds live sessions; expired ones are dropped lazily whenever
// the store is consulted, so there is no background goroutine to stop.
type sessionStore struct {
	mu       sync.Mutex
	byToken  map[string]*session
	byID     map[string]*session
	limit    int
	timeout  time.Duration
	conflict bool // answer 409 rather than 503 beyond limit
}

func (st *sessionStore) init(o Options) {
	st.byToken = map[string]*session{}
	st.byID = map[string]*session{}
	st.limit, st.timeout, st.conflict = o.SessionLimit, o.SessionTimeout, o.Quirks.SessionLimitConflict
}

func (st *sessionStore) expired(ss *session, now time.Time) bool {
	return now.Sub(ss.lastUsed) >= st.timeout
}

// purgeLocked drops expired sessions; the caller holds st.mu.
func (st *sessionStore) purgeLocked(now time.Time) {
	for id, ss := range st.byID {
		if st.expired(ss, now) {
			delete(st.byID, id)
			delete(st.byToken, ss.token)
		}
	}
}

func (st *sessionStore) create(user string, now time.Time) (session, *apiError) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purgeLocked(now)
	if st.limit > 0 && len(st.byID) >= st.limit {
		e := errSessionLimit(st.limit)
		if st.conflict {
			e.Status, e.Header = http.StatusConflict, nil
		}
		return session{}, e
	}
	ss := &session{id: randomHex(8), token: randomHex(24), user: user, lastUsed: now}
	st.byID[ss.id], st.byToken[ss.token] = ss, ss
	return *ss, nil
}

// touch validates a token and restarts its idle timer.
func (st *sessionStore) touch(token string, now time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	ss, ok := st.byToken[token]
	if !ok {
		return false
	}
	if st.expired(ss, now) {
		delete(st.byID, ss.id)
		delete(st.byToken, ss.token)
		return false
	}
	ss.lastUsed = now
	return true
}

func (st *sessionStore) get(id string, now time.Time) (session, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purgeLocked(now)
	ss, ok := st.byID[id]
	if !ok {
		return session{}, false
	}
	return *ss, true
}

func (st *sessionStore) delete(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	ss, ok := st.byID[id]
	if ok {
		delete(st.byID, id)
		delete(st.byToken, ss.token)
	}
	return ok
}

func (st *sessionStore) ids(now time.Time) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.purgeLocked(now)
	ids := make([]string, 0, len(st.byID))
	for id := range st.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (st *sessionStore) count(now time.Time) int { return len(st.ids(now)) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// credentialsOK compares in constant time so the simulator does not teach
// drivers to rely on a timing side channel being absent or present.
func (s *Simulator) credentialsOK(user, pass string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(s.opts.Username))
	p := subtle.ConstantTimeCompare([]byte(pass), []byte(s.opts.Password))
	return u&p == 1
}

func sessionBody(ss session) obj {
	return obj{
		"@odata.id":   sessionsPath + "/" + ss.id,
		"@odata.type": "#Session.v1_6_0.Session",
		"Id":          ss.id,
		"Name":        "User Session",
		"UserName":    ss.user,
	}
}

func (s *Simulator) getSessionService(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":      sessionServicePath,
		"@odata.type":    "#SessionService.v1_1_8.SessionService",
		"Id":             "SessionService",
		"Name":           "Session Service",
		"ServiceEnabled": true,
		"SessionTimeout": int(s.opts.SessionTimeout / time.Second),
		"Sessions":       link(sessionsPath),
		"Status":         statusOK(),
	})
}

func (s *Simulator) listSessions(w http.ResponseWriter, r *http.Request) {
	ids := s.sessions.ids(s.opts.Now())
	for i, id := range ids {
		ids[i] = sessionsPath + "/" + id
	}
	writeJSON(w, http.StatusOK, collection(sessionsPath, "#SessionCollection.SessionCollection", "Session Collection", ids))
}

// login is POST Sessions: 201 with X-Auth-Token and Location, as gofish and
// sushy expect. It needs no credentials other than the ones in the body.
func (s *Simulator) login(w http.ResponseWriter, r *http.Request) {
	body, aerr := readObject(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	var user, pass string
	var errs []*apiError
	for _, name := range sortedKeys(body) {
		raw := body[name]
		v, _, ok := stringValue(raw)
		switch {
		case name != "UserName" && name != "Password":
			errs = append(errs, errPropertyUnknown(name))
		case !ok:
			errs = append(errs, errPropertyType(name, string(raw)))
		case name == "UserName":
			user = v
		default:
			pass = v
		}
	}
	for _, name := range []string{"UserName", "Password"} {
		if _, ok := body[name]; !ok {
			errs = append(errs, newError(http.StatusBadRequest, "CreateFailedMissingReqProperties",
				"The create operation failed because the required property "+name+" was missing from the request.", name))
		}
	}
	if len(errs) > 0 {
		writeError(w, join(errs))
		return
	}
	if !s.credentialsOK(user, pass) {
		writeError(w, errUnauthorized("The user name or password is wrong."))
		return
	}
	ss, aerr := s.sessions.create(user, s.opts.Now())
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.Header().Set("X-Auth-Token", ss.token)
	w.Header().Set("Location", sessionsPath+"/"+ss.id)
	writeJSON(w, http.StatusCreated, sessionBody(ss))
}

func (s *Simulator) getSession(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.sessions.get(r.PathValue("sid"), s.opts.Now())
	if !ok {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, sessionBody(ss))
}

func (s *Simulator) logout(w http.ResponseWriter, r *http.Request) {
	if !s.sessions.delete(r.PathValue("sid")) {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
