package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Resource is one API object as the server sent it. It is a map so that
// fields the server adds or hides by version are never lost.
type Resource map[string]any

// String returns the field as text: "" for missing or null, the string
// itself, or compact JSON for anything else.
func (r Resource) String(field string) string {
	v, ok := r[field]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// UUID returns the uuid field.
func (r Resource) UUID() string { return r.String("uuid") }

// Kind is a top-level collection of the API.
type Kind struct {
	// Path is the collection path under /v1 ("nodes").
	Path string
	// Key is the array's key in a collection answer ("nodes").
	Key string
	// Noun is the singular used in messages ("node").
	Noun string
}

// The collections the client knows.
var (
	Nodes      = Kind{Path: "nodes", Key: "nodes", Noun: "node"}
	Ports      = Kind{Path: "ports", Key: "ports", Noun: "port"}
	Portgroups = Kind{Path: "portgroups", Key: "portgroups", Noun: "portgroup"}
	Chassis    = Kind{Path: "chassis", Key: "chassis", Noun: "chassis"}
	Drivers    = Kind{Path: "drivers", Key: "drivers", Noun: "driver"}
)

// itemPath is /<collection>/<ident>[/sub…], with the ident escaped.
func (k Kind) itemPath(ident string, sub ...string) string {
	p := "/" + k.Path + "/" + url.PathEscape(ident)
	for _, s := range sub {
		p += "/" + s
	}
	return p
}

// Get returns one object by UUID or name. fields, if any, asks the server
// for those fields only (API 1.8 and later).
func (c *Client) Get(ctx context.Context, k Kind, ident string, fields ...string) (Resource, error) {
	p := k.itemPath(ident)
	if len(fields) > 0 {
		p += "?fields=" + url.QueryEscape(strings.Join(fields, ","))
	}
	var r Resource
	if _, err := c.do(ctx, http.MethodGet, p, nil, &r, http.StatusOK); err != nil {
		return nil, err
	}
	return r, nil
}

// Create posts a new object and returns it as created (201, or 202 from
// servers that create asynchronously).
func (c *Client) Create(ctx context.Context, k Kind, body map[string]any) (Resource, error) {
	var r Resource
	if _, err := c.do(ctx, http.MethodPost, "/"+k.Path, body, &r, http.StatusCreated, http.StatusAccepted, http.StatusOK); err != nil {
		return nil, err
	}
	return r, nil
}

// Delete removes an object (204, or 202).
func (c *Client) Delete(ctx context.Context, k Kind, ident string) error {
	_, err := c.do(ctx, http.MethodDelete, k.itemPath(ident), nil, nil, http.StatusNoContent, http.StatusAccepted, http.StatusOK)
	return err
}

// PatchOp is one RFC 6902 operation; Ironic accepts add, replace and remove.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Update applies a JSON patch and returns the updated object.
func (c *Client) Update(ctx context.Context, k Kind, ident string, ops []PatchOp) (Resource, error) {
	var r Resource
	if _, err := c.do(ctx, http.MethodPatch, k.itemPath(ident), ops, &r, http.StatusOK); err != nil {
		return nil, err
	}
	return r, nil
}

// SetOps returns "add" operations for path→value pairs (Ironic's add
// replaces an existing value and creates a missing nested key). Paths may
// omit the leading slash.
func SetOps(values map[string]any) []PatchOp {
	ops := make([]PatchOp, 0, len(values))
	for _, p := range sortedKeys(values) {
		ops = append(ops, PatchOp{Op: "add", Path: pointer(p), Value: values[p]})
	}
	return ops
}

// UnsetOps returns "remove" operations for paths.
func UnsetOps(paths ...string) []PatchOp {
	ops := make([]PatchOp, 0, len(paths))
	for _, p := range paths {
		ops = append(ops, PatchOp{Op: "remove", Path: pointer(p)})
	}
	return ops
}

func pointer(p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return "/" + p
}
