package sim

import "net/http"

// public reports the requests real BMCs answer without credentials: the
// version document, the service root and the session login itself.
func public(r *http.Request) bool {
	switch r.URL.Path {
	case "/redfish", "/redfish/v1", "/redfish/v1/":
		return r.Method == http.MethodGet || r.Method == http.MethodHead
	case sessionsPath:
		return r.Method == http.MethodPost
	}
	return false
}

// withAuth demands a live session token or basic credentials. A request
// carrying a token is judged by the token alone, as BMCs do.
func (s *Simulator) withAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if public(r) {
			next.ServeHTTP(w, r)
			return
		}
		if tok := r.Header.Get("X-Auth-Token"); tok != "" {
			if s.sessions.touch(tok, s.opts.Now()) {
				next.ServeHTTP(w, r)
				return
			}
			writeError(w, errUnauthorized("The session token is invalid or has expired."))
			return
		}
		if user, pass, ok := r.BasicAuth(); ok {
			if s.credentialsOK(user, pass) {
				next.ServeHTTP(w, r)
				return
			}
			writeError(w, errUnauthorized("The user name or password is wrong."))
			return
		}
		writeError(w, errUnauthorized("The request carries neither an X-Auth-Token nor basic credentials."))
	})
}
