package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/uptrace/bun"
)

// nodeCreatable are the attributes POST /v1/nodes takes; gated ones also
// need their version (nodeSince).
var nodeCreatable = append([]string{
	"uuid", "name", "driver", "driver_info", "extra", "instance_info", "instance_uuid", "maintenance",
	"maintenance_reason", "properties", "chassis_uuid", "resource_class", "owner", "lessee",
}, nodeInterfaceFields...)

// createNode serves POST /v1/nodes: 201, Location and the node. Below
// 1.11 the node starts available (shown null below 1.2), from 1.11 enroll.
func (s *server) createNode(w http.ResponseWriter, r *http.Request) error {
	v := VersionFrom(r.Context())
	body, err := readObject(r)
	if err != nil {
		return err
	}
	// The schema first (an attribute POST never takes is 400 at every
	// version), then Ironic's reject_fields_in_newer_versions: a field newer than the
	// request is 406 unless it holds its empty value (null; "" for
	// conductor_group).
	if err := body.only("node", nodeCreatable...); err != nil {
		return err
	}
	for k, raw := range body {
		if since, ok := nodeSince[k]; ok && v.Less(since) && !isNull(raw) &&
			!(k == "conductor_group" && string(raw) == `""`) {
			return errNotAcceptable()
		}
	}
	obj, err := s.reg.New("Node")
	if err != nil {
		return err
	}
	n := obj.(*objects.Node)
	if err := s.applyNodeAttrs(r, n, body); err != nil {
		return err
	}
	if n.Driver == "" {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute driver. Value: 'None'. Mandatory field missing.")
	}
	if err := s.authorizeNodeCreate(r, n); err != nil {
		return err
	}
	if n.UUID == "" {
		n.UUID = uuid.NewString()
	}
	n.ProvisionState = string(states.Enroll)
	if v.Less(v1_11) {
		n.ProvisionState = string(states.Available)
	}
	// The conductor answers a UUID or name that is taken (409
	// NodeAlreadyExists, DuplicateName), from the database's unique
	// constraints, as Ironic's does; checking first here cost two queries
	// per node, a quarter of the API's CPU on enrolment. A conductor of
	// release 0.1 answers a taken instance UUID as NodeAlreadyExists, so
	// that one is still checked here, for the rare create that sets it.
	if n.InstanceUUID != nil {
		if err := s.checkNodeUnique(r.Context(), n); err != nil {
			return err
		}
	}
	stored, err := s.Conductor.CreateNode(r.Context(), n)
	if err != nil {
		return err
	}
	view, err := s.nodeView(r, stored, chassisUUIDs{})
	if err != nil {
		return err
	}
	if nodeTraitsWanted(r, nil) {
		view["traits"] = []string{} // a new node has none
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/nodes/"+stored.UUID)
	writeView(w, http.StatusCreated, view)
	return nil
}

// applyNodeAttrs sets the node attributes a POST or a patched document
// carries, with type checks and Ironic's validation messages.
func (s *server) applyNodeAttrs(r *http.Request, n *objects.Node, body object) error {
	v := VersionFrom(r.Context())
	for _, attr := range []string{"driver", "uuid", "name", "instance_uuid", "maintenance_reason", "resource_class", "owner", "lessee"} {
		val, present, err := body.str(attr, attr != "driver" && attr != "uuid")
		if err != nil || !present {
			if err != nil {
				return err
			}
			continue
		}
		switch attr {
		case "driver":
			n.Driver = *val
		case "uuid":
			if !isUUID(*val) {
				return errorf(http.StatusBadRequest, "Expected a UUID but received %s.", *val)
			}
			n.UUID = *val
		case "name":
			if val != nil && !validNodeName(*val, v) {
				return errorf(http.StatusBadRequest, "Cannot create node with invalid name '%s'", *val)
			}
			n.Name = val
		case "instance_uuid":
			if val != nil && !isUUID(*val) {
				return errorf(http.StatusBadRequest, "Expected a UUID but received %s.", *val)
			}
			n.InstanceUUID = val
		case "maintenance_reason":
			n.MaintenanceReason = val
		case "resource_class":
			if val != nil && len(*val) > 80 {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute resource_class. Value: '%s'. Value should have a maximum character requirement of 80", *val)
			}
			n.ResourceClass = val
		case "owner", "lessee":
			if val != nil && len(*val) > 255 {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Value should have a maximum character requirement of 255", attr, *val)
			}
			if attr == "owner" {
				n.Owner = val
			} else {
				n.Lessee = val
			}
		}
	}
	for _, attr := range nodeInterfaceFields {
		val, present, err := body.str(attr, true)
		if err != nil {
			return err
		}
		if present {
			if val != nil && len(*val) > 255 {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Value should have a maximum character requirement of 255", attr, *val)
			}
			*n.InterfaceField(strings.TrimSuffix(attr, "_interface")) = val
		}
	}
	if b, present, err := body.boolean("maintenance"); err != nil {
		return err
	} else if present {
		n.Maintenance = *b
	}
	dicts := map[string]*map[string]any{"driver_info": &n.DriverInfo, "extra": &n.Extra,
		"instance_info": &n.InstanceInfo, "properties": &n.Properties}
	for attr, dst := range dicts {
		m, present, err := body.dict(attr)
		if err != nil {
			return err
		}
		if present {
			*dst = m
		}
	}
	if err := s.applyNodeAttrs03(r, n, body); err != nil {
		return err
	}
	if err := applyNetworkData(n, body); err != nil {
		return err
	}
	if cu, present, err := body.str("chassis_uuid", true); err != nil {
		return err
	} else if present {
		if cu == nil {
			n.ChassisID = nil
		} else {
			ch, err := s.getChassisByUUID(r, *cu)
			if err != nil {
				if e, ok := err.(*Error); ok && e.Status == http.StatusNotFound {
					e.Status = http.StatusBadRequest // Ironic: 404 is wrong for a body reference
				}
				return err
			}
			n.ChassisID = &ch.ID
		}
	}
	return nil
}

// checkNodeUnique answers 409 with Ironic's messages for a UUID, name or
// instance UUID another node has.
func (s *server) checkNodeUnique(ctx context.Context, n *objects.Node) error {
	taken := func(col string, val any) (bool, error) {
		return s.Store.DB().Bun().NewSelect().Table("nodes").Where("? = ?", bun.Ident(col), val).
			Where("id != ?", n.ID).Exists(ctx)
	}
	if ok, err := taken("uuid", n.UUID); err != nil || ok {
		if err != nil {
			return err
		}
		return errorf(http.StatusConflict, "A node with UUID %s already exists.", n.UUID)
	}
	if n.Name != nil {
		if ok, err := taken("name", *n.Name); err != nil || ok {
			if err != nil {
				return err
			}
			return errorf(http.StatusConflict, "A node with name %s already exists.", *n.Name)
		}
	}
	if n.InstanceUUID != nil {
		if ok, err := taken("instance_uuid", *n.InstanceUUID); err != nil || ok {
			if err != nil {
				return err
			}
			return errorf(http.StatusConflict, "Instance %s is already associated with a node, it cannot be associated with this other node %s", *n.InstanceUUID, n.UUID)
		}
	}
	return nil
}

// deleteNode serves DELETE /v1/nodes/{node}: 204; the conductor refuses
// wrong states with 409.
func (s *server) deleteNode(w http.ResponseWriter, r *http.Request) error {
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	if err := s.authorizeNodeDelete(r, n); err != nil {
		return err
	}
	if err := s.Conductor.DestroyNode(r.Context(), n); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
