package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/objects"
)

var chassisFields = []string{"uuid", "description", "extra", "created_at", "updated_at", "links", "nodes"}

var chassisListFields = []string{"uuid", "description", "links"}

var chassisList = listPage{kind: "Chassis", collection: "chassis", fields: chassisFields, listFields: chassisListFields,
	notFound: errChassisNotFound}

var chassisPatch = patchRules{allowed: []string{"description", "extra"}, since: gated{}}

// chassisView is the chassis as Ironic shows it, with secrets masked.
func (s *server) chassisView(r *http.Request, c *objects.Chassis) map[string]any {
	return maskView(s.unmaskedChassisView(r, c))
}

// unmaskedChassisView is chassisView before masking: the document a PATCH
// applies to.
func (s *server) unmaskedChassisView(r *http.Request, c *objects.Chassis) map[string]any {
	view := map[string]any{
		"uuid": c.UUID, "description": strOrNil(c.Description), "extra": orEmpty(c.Extra),
		"created_at": isoTime(c.CreatedAt), "updated_at": isoTimePtr(c.UpdatedAt),
		"links": resourceLinks(r, "chassis", c.UUID), "nodes": resourceLinks(r, "chassis", c.UUID+"/nodes"),
	}
	s.hideUnpinned(view, "Chassis")
	return view
}

// listChassis serves GET /v1/chassis and /v1/chassis/detail.
func (s *server) listChassis(detail bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.servePage(w, r, chassisList, detail, nil, func(o objects.Object) (map[string]any, string, error) {
			c := o.(*objects.Chassis)
			return s.chassisView(r, c), c.UUID, nil
		})
	}
}

// getChassis serves GET /v1/chassis/{chassis}.
func (s *server) getChassis(w http.ResponseWriter, r *http.Request) error {
	fields, err := parseFields(r, chassisFields, nil)
	if err != nil {
		return err
	}
	c, err := s.getChassisByUUID(r, r.PathValue("chassis"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, selectFields(s.chassisView(r, c), fields))
	return nil
}

// listChassisNodes serves GET /v1/chassis/{chassis}/nodes(/detail).
func (s *server) listChassisNodes(detail bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.getChassisByUUID(r, r.PathValue("chassis"))
		if err != nil {
			return err
		}
		return s.writeNodes(w, r, detail, &c.ID)
	}
}

// applyChassisAttrs sets description (at most 255 characters) and extra.
func applyChassisAttrs(c *objects.Chassis, body object) error {
	if d, present, err := body.str("description", true); err != nil {
		return err
	} else if present {
		if d != nil && len(*d) > 255 {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute description. Value: '%s'. Value should have a maximum character requirement of 255", *d)
		}
		c.Description = d
	}
	if m, present, err := body.dict("extra"); err != nil {
		return err
	} else if present {
		c.Extra = m
	}
	return nil
}

// createChassis serves POST /v1/chassis; the API writes the DB, as Ironic.
func (s *server) createChassis(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	if err := body.only("chassis", "uuid", "description", "extra"); err != nil {
		return err
	}
	obj, err := s.reg.New("Chassis")
	if err != nil {
		return err
	}
	c := obj.(*objects.Chassis)
	c.UUID = uuid.NewString()
	if u, _, err := body.str("uuid", false); err != nil {
		return err
	} else if u != nil {
		if !isUUID(*u) {
			return errorf(http.StatusBadRequest, "Expected a UUID but received %s.", *u)
		}
		if taken, err := s.taken(r.Context(), "chassis", "uuid", *u, 0); err != nil || taken {
			if err != nil {
				return err
			}
			return errorf(http.StatusConflict, "A chassis with UUID %s already exists.", *u)
		}
		c.UUID = *u
	}
	if err := applyChassisAttrs(c, body); err != nil {
		return err
	}
	if err := s.Store.Create(r.Context(), c); err != nil {
		return err
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/chassis/"+c.UUID)
	writeJSON(w, http.StatusCreated, s.chassisView(r, c))
	return nil
}

// patchChassis serves PATCH /v1/chassis/{chassis}.
func (s *server) patchChassis(w http.ResponseWriter, r *http.Request) error {
	c, err := s.getChassisByUUID(r, r.PathValue("chassis"))
	if err != nil {
		return err
	}
	ops, err := s.readPatch(r)
	if err != nil {
		return err
	}
	doc := s.unmaskedChassisView(r, c)
	if err := chassisPatch.check(ops, doc, VersionFrom(r.Context())); err != nil {
		return err
	}
	patched, err := applyPatch(r.Context(), doc, ops)
	if err != nil {
		return err
	}
	changed, err := changedAttrs(doc, patched, chassisPatch.allowed)
	if err != nil {
		return err
	}
	if err := applyChassisAttrs(c, changed); err != nil {
		return err
	}
	if len(changed) > 0 {
		if err := s.Store.Save(r.Context(), c); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, s.chassisView(r, c))
	return nil
}

// deleteChassis serves DELETE /v1/chassis/{chassis}: 204, or 400 while
// nodes are in it (Ironic's ChassisNotEmpty).
func (s *server) deleteChassis(w http.ResponseWriter, r *http.Request) error {
	c, err := s.getChassisByUUID(r, r.PathValue("chassis"))
	if err != nil {
		return err
	}
	busy, err := s.Store.DB().Bun().NewSelect().Table("nodes").Where("chassis_id = ?", c.ID).Exists(r.Context())
	if err != nil {
		return err
	}
	if busy {
		return errorf(http.StatusBadRequest, "Cannot complete the requested action because chassis %s contains nodes.", c.UUID)
	}
	if err := s.Store.Delete(r.Context(), c); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
