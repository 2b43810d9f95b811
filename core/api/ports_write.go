package api

import (
	"context"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// applyPortAttrs sets a port's attributes from a POST body or a patch's
// changes and returns the port's node. The MAC must be valid and unused.
func (s *server) applyPortAttrs(r *http.Request, p *objects.Port, body object) (*objects.Node, error) {
	if addr, present, err := body.str("address", false); err != nil {
		return nil, err
	} else if present {
		mac, ok := normalizeMAC(*addr)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "Expected a MAC address but received %s.", *addr)
		}
		if taken, err := s.taken(r.Context(), "ports", "address", mac, p.ID); err != nil || taken {
			if err != nil {
				return nil, err
			}
			return nil, errorf(http.StatusConflict, "A port with MAC address %s already exists.", mac)
		}
		p.Address = mac
	}
	if nu, present, err := body.str("node_uuid", false); err != nil {
		return nil, err
	} else if present {
		n, err := s.nodeRef(r, *nu)
		if err != nil {
			return nil, err
		}
		p.NodeID = n.ID
	}
	for attr, dst := range map[string]*map[string]any{"extra": &p.Extra, "local_link_connection": &p.LocalLinkConnection} {
		if m, present, err := body.dict(attr); err != nil {
			return nil, err
		} else if present {
			*dst = m
		}
	}
	if b, present, err := body.boolean("pxe_enabled"); err != nil {
		return nil, err
	} else if present {
		p.PXEEnabled = *b
	}
	if pgu, present, err := body.str("portgroup_uuid", true); err != nil {
		return nil, err
	} else if present && pgu == nil {
		p.PortgroupID = nil
	} else if present {
		obj, err := s.byUUID(r.Context(), "Portgroup", *pgu, func(id string) error {
			return errorf(http.StatusBadRequest, "Portgroup %s could not be found.", id)
		})
		if err != nil {
			return nil, err
		}
		pg := obj.(*objects.Portgroup)
		if pg.NodeID != p.NodeID {
			return nil, errorf(http.StatusBadRequest, "Port can not be added to a portgroup belonging to a different node.")
		}
		p.PortgroupID = &pg.ID
	}
	if err := s.applyPortFields(r, p, body); err != nil {
		return nil, err
	}
	return s.nodeByID(r.Context(), p.NodeID)
}

// taken reports whether another row of table has col = val.
func (s *server) taken(ctx context.Context, table, col string, val any, self int64) (bool, error) {
	return s.Store.DB().Bun().NewSelect().Table(table).Where("? = ?", bun.Ident(col), val).
		Where("id != ?", self).Exists(ctx)
}

// portDoc is the (unmasked) document a port PATCH applies to.
func (s *server) portDoc(r *http.Request, p *objects.Port) (map[string]any, error) {
	return s.unmaskedPortView(r, p, s.uuids("Node"), s.uuids("Portgroup"))
}

// patchPort serves PATCH /v1/ports/{port}, saved by the node's conductor.
func (s *server) patchPort(w http.ResponseWriter, r *http.Request) error {
	p, err := s.portByIdent(r)
	if err != nil {
		return err
	}
	ops, err := s.readPatch(r)
	if err != nil {
		return err
	}
	doc, err := s.portDoc(r, p)
	if err != nil {
		return err
	}
	v := VersionFrom(r.Context())
	if err := portPatch.check(ops, doc, v); err != nil {
		return err
	}
	for _, op := range ops {
		if op.Path == "/local_link_connection/network_type" && v.Less(v1_64) {
			return errNotAcceptable()
		}
	}
	patched, err := applyPatch(r.Context(), doc, ops)
	if err != nil {
		return err
	}
	changed, err := changedAttrs(doc, patched, portPatch.allowed)
	if err != nil {
		return err
	}
	for _, req := range []string{"address", "node_uuid"} {
		if raw, ok := changed[req]; ok && isNull(raw) {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: 'None'. Mandatory field missing.", req)
		}
	}
	if raw, ok := changed["pxe_enabled"]; ok && isNull(raw) {
		changed["pxe_enabled"] = []byte("true")
	}
	if raw, ok := changed["is_smartnic"]; ok && isNull(raw) {
		changed["is_smartnic"] = []byte("false")
	}
	n, err := s.applyPortAttrs(r, p, changed)
	if err != nil {
		return err
	}
	if _, ok := changed["physical_network"]; ok && p.PortgroupID != nil && v.AtLeast(v1_102) {
		return errorf(http.StatusBadRequest, "physical_network cannot be changed while the port belongs to a portgroup.")
	}
	stored := p
	if len(changed) > 0 {
		if stored, err = s.Conductor.UpdatePort(r.Context(), n, p); err != nil {
			return err
		}
	}
	view, err := s.portView(r, stored, s.uuids("Node"), s.uuids("Portgroup"))
	if err != nil {
		return err
	}
	writeView(w, http.StatusOK, view)
	return nil
}

// deletePort serves DELETE /v1/ports/{port}: 204.
func (s *server) deletePort(w http.ResponseWriter, r *http.Request) error {
	p, err := s.portByIdent(r)
	if err != nil {
		return err
	}
	n, err := s.nodeByID(r.Context(), p.NodeID)
	if err != nil {
		return err
	}
	if err := s.Conductor.DestroyPort(r.Context(), n, p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
