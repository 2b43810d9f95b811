package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/rpc"
)

// Authenticator checks HTTP basic credentials (auth_strategy http_basic);
// *htpasswd.File implements it.
type Authenticator interface {
	Check(user, password string) bool
}

// maxLoggedUser bounds the user name the access log records: the name is
// whatever the client sent.
const maxLoggedUser = 64

// authenticate answers 401 with Ironic's body and a Basic challenge unless
// the request carries credentials Auth accepts. With no Auth (noauth) every
// request passes. Failed logins are counted per client (htpasswd.Backoff):
// a client that failed too often is answered 429 with Retry-After, before
// any password check, until its lock-out ends. The user name tried goes
// to the access log (never the password).
func (s *server) authenticate(next http.Handler) http.Handler {
	if s.Auth == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := htpasswd.ClientKey(clientIP(r, &s.Links)) // behind trusted_proxies, the client the proxy names
		user, pass, ok := r.BasicAuth()
		if ok {
			setUser(r, user)
		}
		if wait := s.logins.Wait(client); wait > 0 {
			writeLockedOut(w, wait)
			return
		}
		if !ok || !s.Auth.Check(user, pass) {
			if ok {
				s.logins.Failed(client)
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="Baremetal API"`)
			msg := "Authorization failed."
			if !ok {
				msg = "Authorization required."
			}
			WriteFault(w, http.StatusUnauthorized, msg)
			return
		}
		s.logins.Succeeded(client)
		if s.Projects != nil {
			if sc, ok := s.Projects.Scope(user); ok {
				setScope(r, sc)
			}
		}
		// The user travels with the RPCs the request makes, for the
		// conductors' node history.
		next.ServeHTTP(w, r.WithContext(rpc.WithUser(r.Context(), user)))
	})
}

// writeLockedOut answers 429 with Retry-After in whole seconds (at least
// 1) to a client locked out after failed logins.
func writeLockedOut(w http.ResponseWriter, wait time.Duration) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	WriteFault(w, http.StatusTooManyRequests,
		fmt.Sprintf("Too many failed logins from this client; retry in %d seconds.", secs))
}

// setUser records the user name a request authenticates as (or tries
// to), for the access log.
func setUser(r *http.Request, user string) {
	if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		if len(user) > maxLoggedUser {
			user = user[:maxLoggedUser] + "…"
		}
		ri.user = user
	}
}
