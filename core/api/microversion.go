package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

// Ironic's microversion headers.
const (
	HeaderVersion    = "X-OpenStack-Ironic-API-Version"
	HeaderMinVersion = "X-OpenStack-Ironic-API-Minimum-Version"
	HeaderMaxVersion = "X-OpenStack-Ironic-API-Maximum-Version"
)

// The version headers as net/http stores them (canonical MIME keys):
// Header.Get and Set canonicalize a key that is not, a new string on
// every call; with these they find it already canonical.
var (
	headerVersionKey    = http.CanonicalHeaderKey(HeaderVersion)
	headerMinVersionKey = http.CanonicalHeaderKey(HeaderMinVersion)
	headerMaxVersionKey = http.CanonicalHeaderKey(HeaderMaxVersion)
)

// Range is the microversion range a service serves right now. Max is read on
// every request, so a pin reloaded on SIGHUP applies to the next one.
type Range struct {
	Min version.Version
	Max func() version.Version
}

type versionKey struct{}

// VersionFrom returns the negotiated microversion of the request.
func VersionFrom(ctx context.Context) version.Version {
	v, _ := ctx.Value(versionKey{}).(version.Version)
	return v
}

// WithVersion returns ctx carrying v (for handlers tested directly).
func WithVersion(ctx context.Context, v version.Version) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

// Negotiate resolves the request's header against the range. On failure it
// returns the HTTP status, the message, and whether range headers go out.
func (rg Range) Negotiate(header string) (v version.Version, status int, msg string, withRange bool) {
	maxV := rg.Max()
	if header == "" {
		return rg.Min, 0, "", true
	}
	if strings.EqualFold(strings.TrimSpace(header), "latest") {
		return maxV, 0, "", true
	}
	req, err := version.Parse(strings.TrimSpace(header))
	if err != nil {
		return version.Version{}, http.StatusNotAcceptable, "Invalid value for " + HeaderVersion + " header", false
	}
	span := fmt.Sprintf("The supported version range is: [%s, %s].", rg.Min, maxV)
	if req.Major != rg.Min.Major {
		return version.Version{}, http.StatusNotAcceptable,
			fmt.Sprintf("Mutually exclusive versions requested. Version %s requested but not supported by this service. %s", req, span), true
	}
	if req.Less(rg.Min) || maxV.Less(req) {
		return version.Version{}, http.StatusNotAcceptable,
			fmt.Sprintf("Version %s was requested but the minor version is not supported by this service. %s", req, span), true
	}
	return req, 0, "", true
}

// Middleware negotiates the microversion of every request it wraps, sets the
// minimum and maximum headers whenever the header parses, echoes the
// effective version once the range check passes (also on later errors, as
// Ironic does), and answers 406 in Ironic's shape otherwise.
func (rg Range) Middleware(next http.Handler) http.Handler {
	minV := rg.Min.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, status, msg, withRange := rg.Negotiate(r.Header.Get(headerVersionKey))
		if withRange {
			w.Header().Set(headerMinVersionKey, minV)
			w.Header().Set(headerMaxVersionKey, rg.Max().String())
		}
		if status != 0 {
			writeRoutingError(w, status, msg)
			return
		}
		w.Header().Set(headerVersionKey, v.String())
		stripJSONSuffix(r, v)
		next.ServeHTTP(w, r.WithContext(WithVersion(r.Context(), v)))
	})
}

// RequireVersion answers 406 "Request not acceptable." when the request's
// version is below min: Ironic's answer for a feature newer than the
// request (e.g. fields= below 1.8). It reports whether the caller may go on.
func RequireVersion(w http.ResponseWriter, r *http.Request, min version.Version) bool {
	if VersionFrom(r.Context()).Less(min) {
		WriteFault(w, http.StatusNotAcceptable, "Request not acceptable.")
		return false
	}
	return true
}
