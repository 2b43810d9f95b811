package api

import (
	"encoding/json"
	"net/http"

	"github.com/rivetmetal/rivet/core/version"
)

// link is one entry of a links array.
type link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
	Type string `json:"type,omitempty"`
}

// versionDoc is the "version" object of the root and /v1 documents.
type versionDoc struct {
	ID         string `json:"id"`
	Links      []link `json:"links"`
	Status     string `json:"status"`
	MinVersion string `json:"min_version"`
	Version    string `json:"version"`
}

// BaseURL is scheme://host[:port][/prefix] for the links of r, per the
// API's Links (see there): never the client's Host or X-Forwarded-*
// headers unless they come from a trusted proxy.
func BaseURL(r *http.Request) string {
	if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		if ri.base == "" && ri.links != nil {
			ri.base = ri.links.base(r)
		}
		if ri.base == "" {
			ri.base = Links{}.base(r)
		}
		return ri.base
	}
	return Links{}.base(r)
}

func (rg Range) versionDoc(base string) versionDoc {
	return versionDoc{ID: "v1", Links: []link{{Href: base + "/v1/", Rel: "self"}}, Status: "CURRENT",
		MinVersion: rg.Min.String(), Version: rg.Max().String()}
}

// RootHandler serves GET / as Ironic 21.4 does: public, no version check
// and no version headers; "version" is the current (pinned) max.
func (rg Range) RootHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			WriteFault(w, http.StatusMethodNotAllowed, "The method is not allowed for the requested URL.")
			return
		}
		v := rg.versionDoc(BaseURL(r))
		writeJSON(w, http.StatusOK, map[string]any{
			"name":            "OpenStack Ironic API",
			"description":     "Ironic is an OpenStack project which enables the provision and management of baremetal machines.",
			"default_version": v,
			"versions":        []versionDoc{v},
		})
	})
}

// collectionLinks are the self and bookmark links of a top-level resource.
func collectionLinks(base, name string) []link {
	return []link{{Href: base + "/v1/" + name + "/", Rel: "self"}, {Href: base + "/" + name + "/", Rel: "bookmark"}}
}

// gatedCollection is a /v1 entry listed only from a microversion on.
type gatedCollection struct {
	name  string
	since version.Version
}

// V1Handler serves GET /v1 (behind the microversion middleware). extra lists
// the version-gated collections this service has, e.g. portgroups at 1.23.
func (rg Range) V1Handler(extra ...gatedCollection) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			WriteFault(w, http.StatusMethodNotAllowed, "The method is not allowed for the requested URL.")
			return
		}
		base := BaseURL(r)
		doc := map[string]any{
			"id": "v1",
			"links": []link{{Href: base + "/v1/", Rel: "self"},
				{Href: "https://docs.openstack.org//ironic/latest/contributor//webapi.html", Rel: "describedby", Type: "text/html"}},
			"media_types": []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"}},
			"version":     rg.versionDoc(base),
		}
		for _, c := range []string{"chassis", "nodes", "ports", "drivers"} {
			doc[c] = collectionLinks(base, c)
		}
		v := VersionFrom(r.Context())
		for _, g := range extra {
			if v.AtLeast(g.since) {
				doc[g.name] = collectionLinks(base, g.name)
			}
		}
		writeJSON(w, http.StatusOK, doc)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
