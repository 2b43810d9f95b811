package api

import (
	"net/http"
	"strings"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
)

// The port and portgroup fields of release 0.3 (Port 1.1, Portgroup 1.1).
var (
	v1_34  = version.Version{Major: 1, Minor: 34}  // port physical_network
	v1_53  = version.Version{Major: 1, Minor: 53}  // port is_smartnic
	v1_64  = version.Version{Major: 1, Minor: 64}  // local_link_connection network_type
	v1_67  = version.Version{Major: 1, Minor: 67}  // VIF attach: port_uuid or portgroup_uuid, not both
	v1_88  = version.Version{Major: 1, Minor: 88}  // port name
	v1_90  = version.Version{Major: 1, Minor: 90}  // OVN VTEP switches in local_link_connection
	v1_94  = version.Version{Major: 1, Minor: 94}  // port create with node_ident
	v1_97  = version.Version{Major: 1, Minor: 97}  // port description
	v1_99  = version.Version{Major: 1, Minor: 99}  // ?conductor_groups= on ports and portgroups
	v1_100 = version.Version{Major: 1, Minor: 100} // port vendor
	v1_101 = version.Version{Major: 1, Minor: 101} // port category
	v1_102 = version.Version{Major: 1, Minor: 102} // portgroup physical_network
	v1_103 = version.Version{Major: 1, Minor: 103} // portgroup category
	v1_105 = version.Version{Major: 1, Minor: 105} // OVN VTEP switches removed again
)

// vtepKeys are the local_link_connection keys of OVN VTEP switches,
// accepted and shown only from 1.90 to 1.104.
var vtepKeys = []string{"vtep-logical-switch", "vtep-physical-switch"}

// vtepAllowed is Ironic's allow_ovn_vtep_version.
func vtepAllowed(v version.Version) bool { return v.AtLeast(v1_90) && v.Less(v1_105) }

// localLinkView is a port's local_link_connection at v: outside 1.90–1.104
// one naming a VTEP switch is shown as {}, as Ironic does.
func localLinkView(llc map[string]any, v version.Version) map[string]any {
	if !vtepAllowed(v) {
		for _, k := range vtepKeys {
			if _, ok := llc[k]; ok {
				return map[string]any{}
			}
		}
	}
	return orEmpty(llc)
}

// checkLocalLinkVersion refuses, with 406, a local_link_connection of a
// POST body that names network_type below 1.64 or an OVN VTEP switch
// outside 1.90–1.104 (Ironic's _check_allowed_port_fields).
func checkLocalLinkVersion(body object, v version.Version) error {
	raw, ok := body["local_link_connection"]
	if !ok || isNull(raw) {
		return nil
	}
	llc, err := asDict(raw)
	if err != nil {
		return nil // the type check answers
	}
	if _, ok := llc["network_type"]; ok && v.Less(v1_64) {
		return errNotAcceptable()
	}
	if _, ok := llc["vtep-logical-switch"]; ok && !vtepAllowed(v) {
		return errNotAcceptable()
	}
	return nil
}

// tooLong is Ironic's schema error for a string over maxLength.
func tooLong(arg, val string) error {
	return errorf(http.StatusBadRequest, "Schema error for %s: '%s' is too long", arg, val)
}

// optText sets *dst from an optional string attribute of at most max
// characters (null clears it).
func optText(body object, arg, attr string, max int, dst **string) error {
	s, present, err := body.str(attr, true)
	switch {
	case err != nil || !present:
		return err
	case s == nil:
		*dst = nil
	case len([]rune(*s)) > max:
		return tooLong(arg, *s)
	default:
		*dst = s
	}
	return nil
}

// physnetText sets a port's or portgroup's physical_network: at most 64
// characters, and not empty (Ironic's "A non-empty value is required").
func physnetText(body object, arg string, dst **string) error {
	if err := optText(body, arg, "physical_network", 64, dst); err != nil {
		return err
	}
	if *dst != nil && **dst == "" {
		return errorf(http.StatusBadRequest, "A non-empty value is required when setting physical_network")
	}
	return nil
}

// applyPortFields sets the fields of Port 1.1 from a POST body or a
// patch's changes.
func (s *server) applyPortFields(r *http.Request, p *objects.Port, body object) error {
	if err := physnetText(body, "port", &p.PhysicalNetwork); err != nil {
		return err
	}
	if b, present, err := body.boolean("is_smartnic"); err != nil {
		return err
	} else if present {
		p.IsSmartNIC = *b
	}
	for _, f := range []struct {
		attr string
		max  int
		dst  **string
	}{{"description", 255, &p.Description}, {"vendor", 32, &p.Vendor}, {"category", 80, &p.Category}} {
		if err := optText(body, "port", f.attr, f.max, f.dst); err != nil {
			return err
		}
	}
	if name, present, err := body.str("name", true); err != nil {
		return err
	} else if present && name != nil {
		if len([]rune(*name)) > 255 { // the column's width; Ironic's database would fail
			return tooLong("port", *name)
		}
		if taken, err := s.taken(r.Context(), "ports", "name", *name, p.ID); err != nil || taken {
			if err != nil {
				return err
			}
			return errorf(http.StatusConflict, "A port with name %s already exists.", *name)
		}
		p.Name = name
	} else if present {
		p.Name = nil
	}
	return nil
}

// checkSmartNIC is Ironic's check of a Smart NIC port on create: its
// local_link_connection names the port and the host.
func checkSmartNIC(p *objects.Port) error {
	if !p.IsSmartNIC {
		return nil
	}
	for _, k := range []string{"port_id", "hostname"} {
		if _, ok := p.LocalLinkConnection[k].(string); !ok {
			return errorf(http.StatusBadRequest, "Smart NIC port must have port_id and hostname in local_link_connection")
		}
	}
	return nil
}

// portNodeIdent resolves a POST body's node_ident (1.94: the node's UUID
// or name) into node_uuid; both at once is a schema error, as Ironic's
// oneOf. An unknown node is 400.
func (s *server) portNodeIdent(r *http.Request, body object) error {
	_, ok := body["node_ident"]
	if !ok {
		return nil
	}
	if _, both := body["node_uuid"]; both {
		return errorf(http.StatusBadRequest, "Schema error for port: exactly one of node_ident and node_uuid is required")
	}
	ident, _, err := body.str("node_ident", false)
	if err != nil {
		return err
	}
	n, err := s.getNodeByIdent(r, *ident)
	if err != nil {
		if isNotFound(err) || statusCode(err) == http.StatusNotFound {
			return errorf(http.StatusBadRequest, "Node %s could not be found.", *ident)
		}
		return err
	}
	delete(body, "node_ident")
	body["node_uuid"] = []byte(`"` + n.UUID + `"`)
	return nil
}

// statusCode is the HTTP status of an API error, 0 for another error.
func statusCode(err error) int {
	if e, ok := err.(*Error); ok {
		return e.Status
	}
	return 0
}

// conductorGroupsFilter reads ?conductor_groups=a,b (1.99; 406 below):
// the ports or portgroups of nodes in those conductor groups. exclusive
// is Ironic's error when another filter is also given.
func conductorGroupsFilter(r *http.Request, others bool, exclusive string) (func(*bun.SelectQuery) *bun.SelectQuery, error) {
	raw, ok := r.URL.Query()["conductor_groups"]
	if !ok {
		return nil, nil
	}
	if VersionFrom(r.Context()).Less(v1_99) {
		return nil, errNotAcceptable()
	}
	var groups []string
	for _, item := range raw {
		for _, g := range strings.Split(item, ",") {
			if g = strings.TrimSpace(g); g != "" {
				groups = append(groups, g)
			}
		}
	}
	if len(groups) == 0 {
		return nil, nil
	}
	if others {
		return nil, errorf(http.StatusBadRequest, "%s", exclusive)
	}
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id IN (SELECT id FROM nodes WHERE conductor_group IN (?))", bun.In(groups))
	}, nil
}

// checkSortVersion refuses, with 406, a sort_key naming a field newer than
// the request (Ironic's _check_allowed_port_fields([sort_key])).
func checkSortVersion(r *http.Request, since gated) error {
	if s, ok := since[r.URL.Query().Get("sort_key")]; ok && VersionFrom(r.Context()).Less(s) {
		return errNotAcceptable()
	}
	return nil
}
