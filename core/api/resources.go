package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// byUUID loads one object of kind by UUID; not found is notFound(ident).
func (s *server) byUUID(ctx context.Context, kind, ident string, notFound func(string) error) (objects.Object, error) {
	if !isUUID(ident) {
		return nil, notFound(ident)
	}
	obj, err := s.Store.Load(ctx, kind, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.uuid = ?", ident) })
	if isNotFound(err) {
		return nil, notFound(ident)
	}
	return obj, err
}

// byID loads one object of kind by primary key.
func (s *server) byID(ctx context.Context, kind string, id int64) (objects.Object, error) {
	return s.Store.Load(ctx, kind, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.id = ?", id) })
}

func errPortNotFound(ident string) error {
	return errorf(http.StatusNotFound, "Port %s could not be found.", ident)
}

func errPortgroupNotFound(ident string) error {
	return errorf(http.StatusNotFound, "Portgroup %s could not be found.", ident)
}

func errChassisNotFound(ident string) error {
	return errorf(http.StatusNotFound, "Chassis %s could not be found.", ident)
}

// getChassisByUUID loads a chassis; not found is 404 with Ironic's message.
func (s *server) getChassisByUUID(r *http.Request, ident string) (*objects.Chassis, error) {
	obj, err := s.byUUID(r.Context(), "Chassis", ident, errChassisNotFound)
	if err != nil {
		return nil, err
	}
	return obj.(*objects.Chassis), nil
}

// uuidCache maps row ids of one kind to UUIDs while a response is built.
type uuidCache struct {
	s     *server
	kind  string
	uuids map[int64]string
}

func (s *server) uuids(kind string) *uuidCache {
	return &uuidCache{s: s, kind: kind, uuids: map[int64]string{}}
}

func (c *uuidCache) get(ctx context.Context, id *int64) (any, error) {
	if id == nil {
		return nil, nil
	}
	if u, ok := c.uuids[*id]; ok {
		return u, nil
	}
	obj, err := c.s.byID(ctx, c.kind, *id)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	u, err := c.s.reg.Get(obj, "uuid")
	if err != nil {
		return nil, err
	}
	c.uuids[*id] = u.(string)
	return u, nil
}

// nodeRef resolves a node_uuid given in a body: not found is 400, since
// 404 would name the wrong resource (Ironic changes the code the same way).
func (s *server) nodeRef(r *http.Request, ident string) (*objects.Node, error) {
	notFound := func(id string) error {
		if !isUUID(id) {
			// Issue 31: a name where node_uuid wants a UUID.
			return errorf(http.StatusBadRequest, "Node %s could not be found. node_uuid takes a node's UUID and %q is none: "+
				"give the UUID (GET /v1/nodes/%s shows it), or for a port from API 1.94 node_ident, which also takes a name.", id, id, url.PathEscape(id))
		}
		return errorf(http.StatusBadRequest, "Node %s could not be found.", id)
	}
	obj, err := s.byUUID(r.Context(), "Node", ident, notFound)
	if err != nil {
		return nil, err
	}
	n := obj.(*objects.Node)
	if err := s.authorizeNode(r, n, notFound(ident)); err != nil {
		return nil, err
	}
	return n, nil
}
