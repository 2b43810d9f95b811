package api

import (
	"net/http"
)

// Authenticator checks HTTP basic credentials (auth_strategy http_basic);
// *htpasswd.File implements it.
type Authenticator interface {
	Check(user, password string) bool
}

// authenticate answers 401 with Ironic's body and a Basic challenge unless
// the request carries credentials Auth accepts. With no Auth (noauth) every
// request passes.
func (s *server) authenticate(next http.Handler) http.Handler {
	if s.Auth == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || !s.Auth.Check(user, pass) {
			w.Header().Set("WWW-Authenticate", `Basic realm="Baremetal API"`)
			msg := "Authorization failed."
			if !ok {
				msg = "Authorization required."
			}
			WriteFault(w, http.StatusUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}
