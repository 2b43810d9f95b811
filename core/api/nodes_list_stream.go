package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/jsonraw"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins/redact"
	"github.com/uptrace/bun"
)

// The node list's streamed view: what the fast path (nodes_list_fast.go)
// does not serve — ?detail, JSON documents, masked secrets, timestamps,
// traits, a project-scoped reader — is written node by node and field by
// field straight from the nodes: each value read by nodeViewTable as
// nodeView reads it, redacted and masked as nodeView does, and written by
// viewJSON as the view would be, in its keys' order. No map is built per
// node, no key sorted, no field computed only to be hidden; the chassis
// and allocation UUIDs of a page are read in one query each, as its
// traits are. A GET /v1/nodes/detail?limit=100 spent about a third of its
// API CPU building, masking and encoding those maps. The nodes are read
// read-only, and a JSON document the page would write unchanged is copied
// as stored, never decoded (rawNodeDocuments).
// TestNodeListStreamMatchesGeneral compares the two byte for byte.

// streamField is one field of a streamed node list item.
type streamField struct {
	f   *nodeViewField // nil for traits
	key []byte         // `"name":`
}

// nodeStreamFields returns the fields of a node list item at version v,
// in the view's key order: every field of the view for a detailed list,
// else those of fields (nil: nodeListFields) and links; traits when
// traits.
func (s *server) nodeStreamFields(v version.Version, fields []string, detail, traits bool) []streamField {
	var want []string
	switch {
	case fields != nil:
		want = append(slices.Clip(fields), "links")
	case !detail:
		want = nodeListFields
	}
	var out []streamField
	for _, f := range s.nodeViewFieldsAt(v) {
		if want == nil || slices.Contains(want, f.name) {
			out = append(out, streamField{f: f, key: append(appendJSONString(nil, f.name), ':')})
		}
	}
	if traits {
		i, _ := slices.BinarySearchFunc(out, "traits", func(sf streamField, name string) int {
			return strings.Compare(sf.f.name, name)
		})
		out = slices.Insert(out, i, streamField{key: []byte(`"traits":`)})
	}
	return out
}

// writeNodesStreamed writes nodes as writeCollection writes their views,
// next being the page's next link.
func (s *server) writeNodesStreamed(w http.ResponseWriter, r *http.Request, listed []db.ListedNode,
	plan []streamField, next string) error {
	ctx := r.Context()
	c := s.newNodeViewCtx(r, chassisUUIDs{})
	var byNode map[int64][]string
	var chassisIDs, allocationIDs, ids []int64
	for _, l := range listed {
		n := l.Node
		ids = append(ids, n.ID)
		if n.ChassisID != nil {
			chassisIDs = append(chassisIDs, *n.ChassisID)
		}
		if n.AllocationID != nil {
			allocationIDs = append(allocationIDs, *n.AllocationID)
		}
	}
	for _, p := range plan {
		var err error
		switch {
		case p.f == nil:
			byNode, err = s.Store.TraitsOfNodes(ctx, ids)
		case p.f.name == "chassis_uuid":
			err = s.readUUIDs(r, "Chassis", chassisIDs, c.chassis)
		case p.f.name == "allocation_uuid":
			err = s.readUUIDs(r, "Allocation", allocationIDs, c.allocations.uuids)
		}
		if err != nil {
			return err
		}
	}
	base := BaseURL(r)
	var e viewJSON
	var encodeErr error
	b := make([]byte, 0, 512+len(listed)*len(plan)*40)
	b = append(b, '{')
	if next != "" {
		b = append(b, `"next":`...)
		b = appendJSONString(b, next)
		b = append(b, ',')
	}
	b = append(b, `"nodes":[`...)
	for i, l := range listed {
		n := l.Node
		if i > 0 {
			b = append(b, ',')
		}
		redacted := nodeRedacted(r, n)
		b = append(b, '{')
		for j, p := range plan {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, p.key...)
			var val any
			switch {
			case p.f == nil:
				t := byNode[n.ID]
				if t == nil {
					t = []string{}
				}
				val = t
			case p.f.link:
				b = appendNodeLinks(b, base, n.UUID, p.f.links)
				continue
			default:
				hidden, isHidden := any(nil), false
				if redacted {
					hidden, isHidden = redactedNodeField(p.f.name)
				}
				if raw, ok := l.Document(p.f.name); ok && p.f.doc && !isHidden {
					b = append(b, raw...) // rawNodeDocuments accepted it as written
					continue
				}
				var err error
				if val, err = p.f.value(c, n); err != nil {
					return err
				}
				if isHidden {
					val = hidden
				}
				val = maskValue(p.f.name, val)
			}
			var err error
			if b, err = e.value(b, val); err != nil && encodeErr == nil {
				encodeErr = err
			}
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if encodeErr == nil { // writeJSON's encoder writes nothing when encoding fails
		_, _ = w.Write(b)
	}
	return nil
}

// rawNodeDocuments is the node list's answer to db.Store.ListNodes's keep:
// which JSON documents a page may copy as stored instead of decoding them.
// A document the plan writes (and no other field of the plan reads, see
// nodeViewField.reads) is copied when the view would write exactly its
// bytes: encoding/json's own form (jsonraw.Canonical; JSONObject stores
// what encoding/json writes) and nothing that maskValue changes (no secret
// key, no string redact.Text rewrites, and in instance_info no image_url).
// A redacted lessee's hidden fields never use theirs. Decoding a page's
// documents was about 30 % of a GET /v1/nodes/detail's allocations.
// TestNodeListStreamMatchesGeneral compares the pages byte for byte.
func rawNodeDocuments(plan []streamField) func(field, doc string) bool {
	copied := map[string]bool{}
	for _, p := range plan {
		if p.f != nil && p.f.doc {
			copied[p.f.name] = true
		}
	}
	for _, p := range plan {
		if p.f != nil {
			for _, d := range p.f.reads {
				delete(copied, d)
			}
		}
	}
	clean := func(s string, key bool) bool {
		if key {
			return !isSecretKey(s)
		}
		return redact.Text(s) == s
	}
	cleanInstanceInfo := func(s string, key bool) bool {
		return clean(s, key) && !(key && s == "image_url")
	}
	return func(field, doc string) bool {
		switch {
		case !copied[field]:
			return false
		case field == "instance_info":
			return jsonraw.Canonical(doc, cleanInstanceInfo)
		default:
			return jsonraw.Canonical(doc, clean)
		}
	}
}

// readUUIDs reads into uuids the UUID of each object of kind whose id is
// among ids, in one query; ids not found stay out.
func (s *server) readUUIDs(r *http.Request, kind string, ids []int64, uuids map[int64]string) error {
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	objs, err := s.Store.LoadAll(r.Context(), kind, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.id IN (?)", bun.In(slices.Compact(ids)))
	})
	if err != nil {
		return err
	}
	for _, o := range objs {
		id, err := s.reg.Get(o, "id")
		if err != nil {
			return err
		}
		u, err := s.reg.Get(o, "uuid")
		if err != nil {
			return err
		}
		uuids[id.(int64)] = u.(string)
	}
	return nil
}
