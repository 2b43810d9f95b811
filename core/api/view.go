package api

import (
	"net/http"
	"time"

	"github.com/rivetmetal/rivet/core/version"
)

// isoTime renders a timestamp as Ironic does (Python's isoformat of a UTC
// datetime): microseconds unless zero, and "+00:00".
func isoTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// isoTimePtr renders a nullable timestamp; nil stays null.
func isoTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return isoTime(*t)
}

// resourceLinks are the self and bookmark links of one resource, e.g.
// ("nodes", uuid) or ("nodes", uuid+"/ports").
func resourceLinks(r *http.Request, collection, rest string) []link {
	base := BaseURL(r)
	return []link{
		{Href: base + "/v1/" + collection + "/" + rest, Rel: "self"},
		{Href: base + "/" + collection + "/" + rest, Rel: "bookmark"},
	}
}

// gated is a view field that appeared in a microversion after 1.1.
type gated map[string]version.Version

// hide removes the fields of view newer than v.
func (g gated) hide(view map[string]any, v version.Version) {
	for f, since := range g {
		if v.Less(since) {
			delete(view, f)
		}
	}
}

// orEmpty returns m, or {} for nil (Ironic's dict fields default to {}).
func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// strOrNil gives nil for a nil *string, else the string.
func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// writeCollection writes {"<name>": items, "next"?: url}, as writeJSON
// would (viewJSON).
func writeCollection(w http.ResponseWriter, name string, items []map[string]any, next string) {
	var e viewJSON
	b, err := e.collection(make([]byte, 0, 512+len(items)*1024), name, items, next)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if err != nil {
		return // writeJSON's encoder writes nothing when encoding fails
	}
	_, _ = w.Write(append(b, '\n'))
}
