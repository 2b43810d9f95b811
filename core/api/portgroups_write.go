package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
)

// applyPortgroupAttrs sets a portgroup's attributes from a POST body or a
// patch's changes, with Ironic's validation and 409 messages.
func (s *server) applyPortgroupAttrs(r *http.Request, g *objects.Portgroup, body object) error {
	v := VersionFrom(r.Context())
	if addr, present, err := body.str("address", true); err != nil {
		return err
	} else if present && addr == nil {
		g.Address = nil
	} else if present {
		mac, ok := normalizeMAC(*addr)
		if !ok {
			return errorf(http.StatusBadRequest, "Expected a MAC address but received %s.", *addr)
		}
		if taken, err := s.taken(r.Context(), "portgroups", "address", mac, g.ID); err != nil || taken {
			if err != nil {
				return err
			}
			return errorf(http.StatusConflict, "A portgroup with MAC address %s already exists.", mac)
		}
		g.Address = &mac
	}
	if name, present, err := body.str("name", true); err != nil {
		return err
	} else if present && name != nil {
		if !validNodeName(*name, v) {
			return errorf(http.StatusBadRequest, "Expected a logical name but received %s.", *name)
		}
		if taken, err := s.taken(r.Context(), "portgroups", "name", *name, g.ID); err != nil || taken {
			if err != nil {
				return err
			}
			return errorf(http.StatusConflict, "A portgroup with name %s already exists.", *name)
		}
		g.Name = name
	} else if present {
		g.Name = nil
	}
	if nu, present, err := body.str("node_uuid", false); err != nil {
		return err
	} else if present {
		n, err := s.nodeRef(r, *nu)
		if err != nil {
			return err
		}
		g.NodeID = n.ID
	}
	for attr, dst := range map[string]*map[string]any{"extra": &g.Extra, "properties": &g.Properties} {
		if m, present, err := body.dict(attr); err != nil {
			return err
		} else if present {
			*dst = m
		}
	}
	if b, present, err := body.boolean("standalone_ports_supported"); err != nil {
		return err
	} else if present {
		g.StandalonePortsSupported = *b
	}
	if mode, present, err := body.str("mode", true); err != nil {
		return err
	} else if present {
		g.Mode = mode
	}
	if err := physnetText(body, "portgroup", &g.PhysicalNetwork); err != nil {
		return err
	}
	return optText(body, "portgroup", "category", 80, &g.Category)
}

// patchPortgroup serves PATCH /v1/portgroups/{pg}, saved by the node's
// conductor.
func (s *server) patchPortgroup(w http.ResponseWriter, r *http.Request) error {
	if err := portgroupsAllowed(r); err != nil {
		return err
	}
	g, err := s.portgroupByIdent(r, r.PathValue("pg"))
	if err != nil {
		return err
	}
	ops, err := s.readPatch(r)
	if err != nil {
		return err
	}
	doc, err := s.unmaskedPortgroupView(r, g, s.uuids("Node"))
	if err != nil {
		return err
	}
	if err := portgroupPatch.check(ops, doc, VersionFrom(r.Context())); err != nil {
		return err
	}
	patched, err := applyPatch(r.Context(), doc, ops)
	if err != nil {
		return err
	}
	changed, err := changedAttrs(doc, patched, portgroupPatch.allowed)
	if err != nil {
		return err
	}
	if raw, ok := changed["node_uuid"]; ok && isNull(raw) {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute node_uuid. Value: 'None'. Mandatory field missing.")
	}
	if raw, ok := changed["standalone_ports_supported"]; ok && isNull(raw) {
		changed["standalone_ports_supported"] = []byte("true")
	}
	if err := s.applyPortgroupAttrs(r, g, changed); err != nil {
		return err
	}
	stored := g
	if len(changed) > 0 {
		n, err := s.nodeByID(r.Context(), g.NodeID)
		if err != nil {
			return err
		}
		if stored, err = s.Conductor.UpdatePortgroup(r.Context(), n, g); err != nil {
			return err
		}
	}
	view, err := s.portgroupView(r, stored, s.uuids("Node"))
	if err != nil {
		return err
	}
	writeView(w, http.StatusOK, view)
	return nil
}

// deletePortgroup serves DELETE /v1/portgroups/{pg}: 204.
func (s *server) deletePortgroup(w http.ResponseWriter, r *http.Request) error {
	if err := portgroupsAllowed(r); err != nil {
		return err
	}
	g, err := s.portgroupByIdent(r, r.PathValue("pg"))
	if err != nil {
		return err
	}
	n, err := s.nodeByID(r.Context(), g.NodeID)
	if err != nil {
		return err
	}
	if err := s.Conductor.DestroyPortgroup(r.Context(), n, g); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
