package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/traits"
	"github.com/rivetmetal/rivet/core/version"
)

// v1_37 adds node traits: /v1/nodes/{node}/traits and the node's traits
// field.
var v1_37 = version.Version{Major: 1, Minor: 37}

// msgOneTraitOrAll is Ironic's answer to a PUT that neither names one
// trait nor gives the whole list (or does both).
const msgOneTraitOrAll = "A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> with no body, " +
	"or all node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with the list of traits specified in the request body."

// traitsBelow answers a traits request below 1.37 as Ironic's older
// releases do, where /traits is not a sub-resource: GET reads it as
// ?fields=traits (406), PUT finds no method (405), DELETE nothing (404).
// It reports whether it answered.
func traitsBelow(w http.ResponseWriter, r *http.Request) bool {
	if !VersionFrom(r.Context()).Less(v1_37) {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		WriteFault(w, http.StatusNotAcceptable, msgNotAcceptable)
	case http.MethodPut:
		writeRoutingError(w, http.StatusMethodNotAllowed, "The method PUT is not allowed for this resource.")
	default:
		writeRoutingError(w, http.StatusNotFound, "The resource could not be found.")
	}
	return true
}

// getNodeTraits serves GET /v1/nodes/{node}/traits (1.37): {"traits": […]}.
func (s *server) getNodeTraits(w http.ResponseWriter, r *http.Request) error {
	if traitsBelow(w, r) {
		return nil
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	names, err := s.Store.NodeTraits(r.Context(), n.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"traits": names})
	return nil
}

// putNodeTraits serves PUT /v1/nodes/{node}/traits with {"traits": […]},
// which replaces every trait of the node, and PUT
// /v1/nodes/{node}/traits/{trait} without a body, which adds one (1.37):
// 204, through the conductor under the node's lease. Checks in Ironic's
// order: the names and the body's schema, the node, then one trait or all.
func (s *server) putNodeTraits(w http.ResponseWriter, r *http.Request) error {
	if traitsBelow(w, r) {
		return nil
	}
	trait := r.PathValue("trait")
	if trait != "" {
		if err := checkTrait("trait", trait); err != nil {
			return err
		}
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	list, hasList, bodyGiven, err := traitsBody(data)
	if err != nil {
		return err
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	if (trait != "") == hasList {
		return errorf(http.StatusBadRequest, msgOneTraitOrAll)
	}
	if trait != "" && bodyGiven {
		return errorf(http.StatusBadRequest, "No body should be provided when adding a trait")
	}
	if trait != "" {
		if err := s.Conductor.AddNodeTraits(r.Context(), n, []string{trait}, false); err != nil {
			return err
		}
		w.Header().Set("Location", BaseURL(r)+"/v1/nodes/"+r.PathValue("node")+"/traits/"+trait)
	} else if err := s.Conductor.AddNodeTraits(r.Context(), n, list, true); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// deleteNodeTraits serves DELETE /v1/nodes/{node}/traits, which removes
// every trait, and DELETE /v1/nodes/{node}/traits/{trait} (1.37): 204, or
// 404 when the node does not have the trait.
func (s *server) deleteNodeTraits(w http.ResponseWriter, r *http.Request) error {
	if traitsBelow(w, r) {
		return nil
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	var remove []string // nil: all
	if t := r.PathValue("trait"); t != "" {
		remove = []string{t}
	}
	if err := s.Conductor.RemoveNodeTraits(r.Context(), n, remove); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkTrait is Ironic's schema check of one trait name, reported as
// "Schema error for <name>: …".
func checkTrait(name, trait string) error {
	msg, cause := traits.Problem(trait)
	if msg == "" {
		return nil
	}
	return schemaError(name, msg, cause)
}

func schemaError(name, msg, cause string) error {
	if cause != "" {
		msg += ". Possible root cause: " + cause
	}
	return errorf(http.StatusBadRequest, "Schema error for %s: %s", name, msg)
}

// traitsBody reads a PUT body against Ironic's {"traits": [trait, …]}
// schema (no other key). hasList reports a traits key; given reports a
// body that is a non-empty object (Ironic's "json_body" test). An empty
// body is no body.
func traitsBody(data []byte) (list []string, hasList, given bool, err error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, false, false, nil
	}
	var doc any
	if err := decodeJSON(data, &doc); err != nil {
		return nil, false, false, err
	}
	if doc == nil {
		return nil, false, false, nil // null: no body, as Ironic's body=None
	}
	c := &schemaCheck{}
	obj, ok := doc.(map[string]any)
	if !ok {
		c.typeOK(0, doc, "object")
	} else {
		c.object(0, obj, []schemaProp{{"traits", traitList}}, nil)
	}
	if err := c.err("body"); err != nil {
		return nil, false, false, err
	}
	raw, hasList := obj["traits"]
	if !hasList {
		return nil, false, len(obj) > 0, nil
	}
	for _, it := range raw.([]any) {
		list = append(list, it.(string))
	}
	if list == nil {
		list = []string{}
	}
	return list, true, true, nil
}

// traitList is {"type": "array", "items": TRAITS_SCHEMA}.
func traitList(c *schemaCheck, depth int, v any) {
	if c.typeOK(depth, v, "array") {
		for _, it := range v.([]any) {
			traitName(c, depth+1, it)
		}
	}
}

// nodeTraitsWanted reports whether a node view at the request's version
// shows traits given the fields asked for (nil: all).
func nodeTraitsWanted(r *http.Request, fields []string) bool {
	return !VersionFrom(r.Context()).Less(v1_37) && (fields == nil || slices.Contains(fields, "traits"))
}

// addNodeTraits sets the traits field of views (one per node of nodes,
// in order) from one query for them all: a list shows traits without a
// query per node.
func (s *server) addNodeTraits(ctx context.Context, views []map[string]any, nodes []*objects.Node) error {
	ids := make([]int64, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	byNode, err := s.Store.TraitsOfNodes(ctx, ids)
	if err != nil {
		return err
	}
	for i, n := range nodes {
		t := byNode[n.ID]
		if t == nil {
			t = []string{}
		}
		views[i]["traits"] = t
	}
	return nil
}
