package api

import (
	"context"
	"database/sql"
	"net/http"
	"slices"
	"sync"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins/redact"
	"github.com/uptrace/bun"
)

// The node list's fast path. A list whose items show only scalar columns
// (the default non-detail list, or ?fields= made of such fields) reads
// just those columns (db.ListNodeScalars) and builds each item from them:
// no versioned object, no full view. A list of 1,000
// nodes cost about 170 ms of API CPU through objects and views, most of it
// decoding JSON columns the list never shows. Everything else (detail,
// JSON documents, masked secrets, chassis_uuid, timestamps) keeps the
// general path, and the fast path gives way to it whenever a row needs
// what only the objects layer does (an unknown or missing object version,
// a version whose upgrade converts values). TestNodeListFastMatchesSlow
// compares the two byte for byte; both are written by writeCollection.

// scalarField is how the fast path reads one node list field.
type scalarField struct {
	column string // the column it reads; "" for links
	links  string // for links: the path after the node's UUID ("", "/ports", …)
	value  func(n *db.NodeScalars, v version.Version) any
}

func nullString(s sql.NullString) any {
	if !s.Valid {
		return nil
	}
	return s.String
}

func textField(col string, get func(n *db.NodeScalars) *sql.NullString) scalarField {
	return scalarField{column: col, value: func(n *db.NodeScalars, _ version.Version) any {
		return nullString(*get(n))
	}}
}

// maskedTextField is textField for a free text that may quote a
// credential, masked as maskView masks it.
func maskedTextField(col string, get func(n *db.NodeScalars) *sql.NullString) scalarField {
	return scalarField{column: col, value: func(n *db.NodeScalars, _ version.Version) any {
		s := *get(n)
		s.String = redact.Text(s.String)
		return nullString(s)
	}}
}

// nodeScalarFields are the node API fields the fast path writes, each as
// nodeView shows it.
var nodeScalarFields = map[string]scalarField{
	"uuid": {column: "", value: func(n *db.NodeScalars, _ version.Version) any {
		return n.UUID
	}},
	"driver": {column: "driver", value: func(n *db.NodeScalars, _ version.Version) any {
		return n.Driver
	}},
	"maintenance": {column: "maintenance", value: func(n *db.NodeScalars, _ version.Version) any {
		return n.Maintenance
	}},
	"console_enabled": {column: "console_enabled", value: func(n *db.NodeScalars, _ version.Version) any {
		return n.ConsoleEnabled
	}},
	"provision_state": {column: "provision_state", value: func(n *db.NodeScalars, v version.Version) any {
		ps := "enroll" // NULL: the Node object's default
		if n.ProvisionState.Valid {
			ps = n.ProvisionState.String
		}
		if v.Less(v1_2) && ps == string(states.Available) {
			return nil // NOSTATE before 1.2
		}
		return ps
	}},
	"name":                   textField("name", func(n *db.NodeScalars) *sql.NullString { return &n.Name }),
	"instance_uuid":          textField("instance_uuid", func(n *db.NodeScalars) *sql.NullString { return &n.InstanceUUID }),
	"last_error":             maskedTextField("last_error", func(n *db.NodeScalars) *sql.NullString { return &n.LastError }),
	"maintenance_reason":     maskedTextField("maintenance_reason", func(n *db.NodeScalars) *sql.NullString { return &n.MaintenanceReason }),
	"reservation":            textField("reservation", func(n *db.NodeScalars) *sql.NullString { return &n.Reservation }),
	"power_state":            textField("power_state", func(n *db.NodeScalars) *sql.NullString { return &n.PowerState }),
	"target_power_state":     textField("target_power_state", func(n *db.NodeScalars) *sql.NullString { return &n.TargetPowerState }),
	"target_provision_state": textField("target_provision_state", func(n *db.NodeScalars) *sql.NullString { return &n.TargetProvisionState }),
	"network_interface":      textField("network_interface", func(n *db.NodeScalars) *sql.NullString { return &n.NetworkInterface }),
	"resource_class":         textField("resource_class", func(n *db.NodeScalars) *sql.NullString { return &n.ResourceClass }),
	"links":                  {links: ""},
	"ports":                  {links: "/ports"},
	"states":                 {links: "/states"},
	"portgroups":             {links: "/portgroups"},
}

// nodeFastVersions are the stored Node versions whose rows the fast path
// may read: upgrading them to the latest version runs no converter (Up),
// so the object would hold the columns' values as they are. Fields a later
// version adds are reset by the upgrade, so nodeFastFieldOK also requires
// a fast field to exist since the oldest version.
var nodeFastVersions = sync.OnceValue(func() map[string]bool {
	steps := objects.NodeKind().Versions
	ok := map[string]bool{}
	for i := range steps {
		convert := false
		for _, later := range steps[i+1:] {
			if later.Up != nil {
				convert = true
			}
		}
		if !convert {
			ok[steps[i].Version.String()] = true
		}
	}
	return ok
})

// nodeFastFieldOK reports whether field is an object field the Node has
// had since its oldest version (or no object field at all, like links).
var nodeFastFieldOK = sync.OnceValue(func() func(string) bool {
	k := objects.NodeKind()
	oldest := k.Versions[0].Version
	since := map[string]version.Version{}
	for _, f := range k.Fields {
		since[f.Name] = f.Since
	}
	return func(field string) bool {
		s, isField := since[field]
		return !isField || s == oldest
	}
})

// nodeFastFields returns the sorted fields of a node list item at the
// request's version, and whether the fast path can write them all: the
// default list fields, or fields plus links, less those newer than the
// request's version or than the pinned Node version (what nodeView,
// hideUnpinned and selectFields leave).
func (s *server) nodeFastFields(v version.Version, fields []string) ([]string, bool) {
	want := nodeListFields
	if fields != nil {
		want = append(slices.Clip(fields), "links")
	}
	var pinned []string
	ov, isPinned := s.Pinner.Effective().ObjectVersion("Node")
	if isPinned {
		pinned = s.reg.FieldsAt("Node", ov)
	}
	table, err := s.reg.FieldTable("Node")
	if err != nil {
		return nil, false
	}
	isObjectField := func(f string) bool {
		return slices.ContainsFunc(table, func(ff objects.Field) bool { return ff.Name == f })
	}
	out := make([]string, 0, len(want))
	for _, f := range want {
		if _, ok := nodeScalarFields[f]; !ok || !nodeFastFieldOK()(f) {
			return nil, false
		}
		if since, gated := nodeSince[f]; gated && v.Less(since) {
			continue
		}
		if isPinned && isObjectField(f) && !slices.Contains(pinned, f) {
			continue
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out, true
}

// writeNodesFast writes the list of nodes the page query selects with
// fields (from nodeFastFields). It reports false, having written nothing,
// when a row needs the objects layer (see nodeFastVersions); the caller
// then takes the general path.
func (s *server) writeNodesFast(ctx context.Context, w http.ResponseWriter, r *http.Request, v version.Version,
	fields []string, pg page, query func(*bun.SelectQuery) *bun.SelectQuery) (bool, error) {
	var cols []string
	for _, f := range fields {
		if c := nodeScalarFields[f].column; c != "" && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	rows, err := s.Store.ListNodeScalars(ctx, cols, query)
	if err != nil {
		return false, err
	}
	okVersions := nodeFastVersions()
	for i := range rows {
		if !rows[i].Version.Valid || !okVersions[rows[i].Version.String] {
			return false, nil
		}
	}
	items := make([]map[string]any, len(rows))
	for i := range rows {
		n := &rows[i]
		item := make(map[string]any, len(fields))
		for _, f := range fields {
			sf := nodeScalarFields[f]
			if sf.value != nil {
				item[f] = sf.value(n, v)
			} else {
				item[f] = resourceLinks(r, "nodes", n.UUID+sf.links)
			}
		}
		items[i] = item
	}
	last := ""
	if len(rows) > 0 {
		last = rows[len(rows)-1].UUID
	}
	writeCollection(w, "nodes", items, nextURL(r, pg, len(rows), last))
	if s.fastNodeLists != nil {
		s.fastNodeLists.Add(1)
	}
	return true, nil
}
