package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/rpc"
)

// HeaderRequestID is the response header carrying the request id, as
// Ironic's oslo request_id middleware names it.
const HeaderRequestID = "Openstack-Request-Id"

// HeaderXRequestID is the same id under oslo's own header name (API 1.107).
const HeaderXRequestID = "X-Openstack-Request-Id"

type requestInfoKey struct{}

// requestInfo is filled in as a request goes down the chain and read by the
// outer middleware (logs, metrics).
type requestInfo struct {
	id    string
	route string
	// user is the HTTP basic user name the request presented, if any.
	user string
	// scope is the project-scoped identity the user acts with (rbac.go);
	// nil for an unrestricted one.
	scope *htpasswd.Scope
	links *Links
	base  string // BaseURL's, once asked
}

// RequestIDFrom returns the request id of the REST request ctx serves.
func RequestIDFrom(ctx context.Context) string {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return ri.id
	}
	return ""
}

// routeOf is the route pattern the request matched ("" before routing).
func routeOf(r *http.Request) string {
	if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return ri.route
	}
	return ""
}

func setRoute(r *http.Request, route string) {
	if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		ri.route = route
	}
}

// recorder remembers the status written through it.
type recorder struct {
	http.ResponseWriter
	status int
}

func (rw *recorder) WriteHeader(code int) {
	if rw.status == 0 {
		rw.status = code
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	return rw.ResponseWriter.Write(b)
}

// chain wraps the mux with what every request goes through: request id,
// metrics and the access log, the per-client rate limit (before auth, so
// floods never reach bcrypt), the body limit, auth (except on the public
// documents and the ramdisk endpoints, as Ironic) and the microversion
// check on /v1 paths.
func (s *server) chain(mux *http.ServeMux, m *metrics) http.Handler {
	versioned := s.rg.Middleware(dispatch(mux))
	root := s.rg.RootHandler()
	protected := s.authenticate(versioned)
	var metricsHandler http.Handler
	if m != nil {
		metricsHandler = s.authenticate(authorizeMetrics(m.handler()))
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/":
			setRoute(r, "/")
			root.ServeHTTP(w, r)
		case p == "/metrics" && metricsHandler != nil:
			setRoute(r, "/metrics")
			metricsHandler.ServeHTTP(w, r)
		case p == "/v1" || p == "/v1/":
			r.URL.Path = "/v1/"
			versioned.ServeHTTP(w, r)
		case strings.HasPrefix(p, "/v1/lookup"), strings.HasPrefix(p, "/v1/heartbeat/"), p == "/v1/continue_inspection":
			versioned.ServeHTTP(w, r)
		case strings.HasPrefix(p, "/v1/"):
			protected.ServeHTTP(w, r)
		default:
			setRoute(r, "404")
			writeRoutingError(w, http.StatusNotFound, "The resource could not be found.")
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{id: "req-" + uuid.NewString(), links: &s.Links}
		ctx := context.WithValue(r.Context(), requestInfoKey{}, ri)
		ctx = rpc.WithRequestID(ctx, ri.id)
		r = r.WithContext(ctx)
		w.Header().Set(HeaderRequestID, ri.id)
		// oslo's request_id middleware sends the id under both names
		// (the X- one is what API 1.107 documents), at every version.
		w.Header().Set(HeaderXRequestID, ri.id)
		rec := &recorder{ResponseWriter: w}
		ok, wait := true, time.Duration(0)
		if s.limiter != nil {
			ok, wait = s.limiter.allow(clientIP(r, &s.Links))
		}
		switch {
		case !ok:
			setRoute(r, "429")
			writeRateLimited(rec, wait)
		case r.ContentLength > s.MaxBodyBytes:
			setRoute(r, "413")
			WriteFault(rec, http.StatusRequestEntityTooLarge, msgTooLarge)
		default:
			if r.Body != nil {
				r.Body = http.MaxBytesReader(rec, r.Body, s.MaxBodyBytes)
			}
			inner.ServeHTTP(rec, r)
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		elapsed := time.Since(start)
		if m != nil {
			m.observe(r.Method, ri.route, rec.status, elapsed)
		}
		// LogAttrs: typed attributes, not key-value pairs boxed into any
		// and sorted out again for every request.
		// The client and the user tried name who failed a login (401,
		// 429) as well as who did what.
		attrs := []slog.Attr{slog.String("request_id", ri.id), slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", rec.status), slog.Int64("duration_ms", elapsed.Milliseconds()),
			slog.String("client", clientIP(r, &s.Links))}
		if ri.user != "" {
			attrs = append(attrs, slog.String("user", ri.user))
		}
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
	})
}
