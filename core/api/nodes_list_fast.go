package api

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins/redact"
	"github.com/uptrace/bun"
)

// The node list's fast path. A list whose items show only scalar columns
// (the default non-detail list, or ?fields= made of such fields) reads
// just those columns (db.ListNodeScalars) and writes the JSON itself:
// no versioned object, no full view, no map per item. A list of 1,000
// nodes cost about 170 ms of API CPU through objects and views, most of it
// decoding JSON columns the list never shows. Everything else (detail,
// JSON documents, masked secrets, chassis_uuid, timestamps) keeps the
// general path, and the fast path gives way to it whenever a row needs
// what only the objects layer does (an unknown or missing object version,
// a version whose upgrade converts values). TestNodeListFastMatchesSlow
// compares the two byte for byte.

// scalarField is how the fast path writes one node list field.
type scalarField struct {
	column string // the column it reads; "" for links
	links  string // for links: the path after the node's UUID ("", "/ports", …)
	write  func(b []byte, n *db.NodeScalars, v version.Version) []byte
}

func nullString(b []byte, s sql.NullString) []byte {
	if !s.Valid {
		return append(b, "null"...)
	}
	return appendJSONString(b, s.String)
}

func textField(col string, get func(n *db.NodeScalars) *sql.NullString) scalarField {
	return scalarField{column: col, write: func(b []byte, n *db.NodeScalars, _ version.Version) []byte {
		return nullString(b, *get(n))
	}}
}

// maskedTextField is textField for a free text that may quote a
// credential, masked as maskView masks it.
func maskedTextField(col string, get func(n *db.NodeScalars) *sql.NullString) scalarField {
	return scalarField{column: col, write: func(b []byte, n *db.NodeScalars, _ version.Version) []byte {
		s := *get(n)
		s.String = redact.Text(s.String)
		return nullString(b, s)
	}}
}

func boolJSON(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// nodeScalarFields are the node API fields the fast path writes, each as
// nodeView shows it.
var nodeScalarFields = map[string]scalarField{
	"uuid": {column: "", write: func(b []byte, n *db.NodeScalars, _ version.Version) []byte {
		return appendJSONString(b, n.UUID)
	}},
	"driver": {column: "driver", write: func(b []byte, n *db.NodeScalars, _ version.Version) []byte {
		return appendJSONString(b, n.Driver)
	}},
	"maintenance": {column: "maintenance", write: func(b []byte, n *db.NodeScalars, _ version.Version) []byte {
		return boolJSON(b, n.Maintenance)
	}},
	"console_enabled": {column: "console_enabled", write: func(b []byte, n *db.NodeScalars, _ version.Version) []byte {
		return boolJSON(b, n.ConsoleEnabled)
	}},
	"provision_state": {column: "provision_state", write: func(b []byte, n *db.NodeScalars, v version.Version) []byte {
		ps := "enroll" // NULL: the Node object's default
		if n.ProvisionState.Valid {
			ps = n.ProvisionState.String
		}
		prov, ok := provisionStateView(v, ps).(string)
		if !ok {
			return append(b, "null"...) // NOSTATE before 1.2
		}
		return appendJSONString(b, prov)
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
	"volume":                 {links: "/volume"},
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
	base := BaseURL(r)
	type plan struct {
		key []byte // `"name":`
		f   scalarField
	}
	plans := make([]plan, len(fields))
	for i, f := range fields {
		plans[i] = plan{key: append(appendJSONString(nil, f), ':'), f: nodeScalarFields[f]}
	}
	b := make([]byte, 0, 64+len(rows)*(64+len(fields)*48+len(base)*2))
	last := ""
	if len(rows) > 0 {
		last = rows[len(rows)-1].UUID
	}
	b = append(b, '{')
	if next := nextURL(r, pg, len(rows), last); next != "" {
		b = append(b, `"next":`...)
		b = appendJSONString(b, next)
		b = append(b, ',')
	}
	b = append(b, `"nodes":[`...)
	for i := range rows {
		n := &rows[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, p := range plans {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, p.key...)
			if p.f.write != nil {
				b = p.f.write(b, n, v)
				continue
			}
			b = appendNodeLinks(b, base, n.UUID, p.f.links)
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if s.fastNodeLists != nil {
		s.fastNodeLists.Add(1)
	}
	return true, nil
}

// appendNodeLinks appends the links resourceLinks(r, "nodes", uuid+rest)
// gives, as viewJSON writes them, base being BaseURL(r).
func appendNodeLinks(b []byte, base, uuid, rest string) []byte {
	b = append(b, `[{"href":`...)
	b = appendJSONString3(b, base, "/v1/nodes/", uuid, rest)
	b = append(b, `,"rel":"self"},{"href":`...)
	b = appendJSONString3(b, base, "/nodes/", uuid, rest)
	return append(b, `,"rel":"bookmark"}]`...)
}

// jsonPlain reports whether s is written in JSON as itself between
// quotes: printable ASCII other than '"' and '\'.
func jsonPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendJSONString appends s as a JSON string, exactly as writeJSON's
// encoder (HTML not escaped) writes it.
func appendJSONString(b []byte, s string) []byte {
	if jsonPlain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendJSONString3 appends the JSON string a+b+c+d without concatenating
// them when all are plain.
func appendJSONString3(out []byte, a, b, c, d string) []byte {
	if !jsonPlain(a) || !jsonPlain(b) || !jsonPlain(c) || !jsonPlain(d) {
		return appendJSONString(out, strings.Join([]string{a, b, c, d}, ""))
	}
	out = append(out, '"')
	out = append(out, a...)
	out = append(out, b...)
	out = append(out, c...)
	out = append(out, d...)
	return append(out, '"')
}
