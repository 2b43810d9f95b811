package api

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestRBACPoliciesNameRoutes: every route a policy table names is a route
// the API serves, so a mistyped pattern cannot leave a route to the
// default rule unnoticed.
func TestRBACPoliciesNameRoutes(t *testing.T) {
	mux := (&server{}).routes()
	wildcard := regexp.MustCompile(`\{[a-z]+\}`)
	for name, table := range map[string]map[string]policy{"globalPolicies": globalPolicies, "nodePolicies": nodePolicies} {
		for route := range table {
			method, path, ok := strings.Cut(route, " ")
			if !ok {
				t.Errorf("%s: %q is not \"METHOD /path\"", name, route)
				continue
			}
			r := httptest.NewRequest(method, "http://rivet.test"+wildcard.ReplaceAllString(path, "x1"), nil)
			if _, pattern := mux.Handler(r); pattern != route {
				t.Errorf("%s names %q, which the API routes to %q", name, route, pattern)
			}
		}
	}
}
