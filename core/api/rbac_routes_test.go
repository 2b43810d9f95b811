package api

import (
	"context"
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

// TestRBACEveryRouteHasPolicy: every route the API registers has an
// explicit policy — a route on one node in nodePolicies, any other in
// globalPolicies or, for a port's or portgroup's (their node decides),
// nodePolicies — or is in publicRoutes with its reason; and what
// publicRoutes names is served. A new route without a rule fails here
// rather than falling to the (closed) default of authorizeRoute and
// nodeRoutePolicy.
func TestRBACEveryRouteHasPolicy(t *testing.T) {
	_, patterns := (&server{}).routeTable()
	if len(patterns) < 100 {
		t.Fatalf("routeTable lists %d routes; the API serves well over 100", len(patterns))
	}
	served := map[string]bool{}
	for _, route := range patterns {
		if served[route] {
			t.Errorf("%q registered twice", route)
		}
		served[route] = true
		if _, ok := publicRoutes[route]; ok {
			continue
		}
		_, global := globalPolicies[route]
		_, node := nodePolicies[route]
		switch {
		case strings.Contains(route, "{node}") && !node:
			t.Errorf("%q acts on a node and has no rule in nodePolicies", route)
		case !global && !node:
			t.Errorf("%q has no rule in globalPolicies or nodePolicies (nor a reason in publicRoutes)", route)
		}
	}
	for route := range publicRoutes {
		if !served[route] {
			t.Errorf("publicRoutes names %q, which the API does not register", route)
		}
		if _, ok := globalPolicies[route]; ok {
			t.Errorf("%q is both public and in globalPolicies", route)
		}
		if _, ok := nodePolicies[route]; ok {
			t.Errorf("%q is both public and in nodePolicies", route)
		}
	}
}

// TestRBACUnlistedRouteFailsClosed: a route in no table (what
// TestRBACEveryRouteHasPolicy keeps from being served) needs the system
// scope — reader for GET, member else — for a node's route as for any
// other; a project's admin is refused even on its own node.
func TestRBACUnlistedRouteFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		user, method, route string
		allowed             bool
	}{
		{"p1admin", "GET", "GET /v1/nodes/{node}/newthing", false},
		{"p1admin", "PUT", "PUT /v1/nodes/{node}/newthing", false},
		{"p1admin", "GET", "GET /v1/newthing", false},
		{"sysread", "GET", "GET /v1/nodes/{node}/newthing", true},
		{"sysread", "PUT", "PUT /v1/nodes/{node}/newthing", false},
		{"sysmem", "PUT", "PUT /v1/nodes/{node}/newthing", true},
		{"sysread", "GET", "GET /v1/newthing", true},
		{"sysread", "POST", "POST /v1/newthing", false},
	} {
		sc := rbacUsers[tc.user]
		r := httptest.NewRequest(tc.method, "http://rivet.test/v1/x", nil)
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, &requestInfo{route: tc.route, scope: &sc}))
		err := (&server{}).authorizeRoute(r)
		if err == nil && strings.Contains(tc.route, "{node}") {
			// The node's rule, where the handler loads it (owner p1).
			if !nodeRoutePolicy(r).allow(&sc, "p1", "p2") {
				err = errForbidden(nodeRoutePolicy(r))
			}
		}
		if (err == nil) != tc.allowed {
			t.Errorf("%s %s: error %v, want allowed %v", tc.user, tc.route, err, tc.allowed)
		}
	}
}
