package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/version"
)

// Transport carries a prepared request to a conductor and returns the raw
// result. host is a conductor's registered name ("host" or "host:port").
type Transport interface {
	Send(ctx context.Context, host string, req *Request) (json.RawMessage, error)
}

// Client sends conductor RPCs capped at the effective release's RPC version.
type Client struct {
	methods *Methods
	cap     func() version.Version
	codec   ObjectCodec
	tr      Transport
}

// NewClient returns a client. capFn is read on every call, so a pin reloaded
// on SIGHUP applies to the next call (core/release Pinner.Effective().RPC).
func NewClient(methods *Methods, capFn func() version.Version, codec ObjectCodec, tr Transport) *Client {
	return &Client{methods: methods, cap: capFn, codec: codec, tr: tr}
}

// Cap returns the current version cap.
func (c *Client) Cap() version.Version { return c.cap() }

// CanSendVersion reports whether a request at v may be sent under the cap
// (oslo's can_send_version).
func (c *Client) CanSendVersion(v version.Version) bool { return v.ServedBy(c.cap()) }

// CanSend reports whether method is available under the cap, so the API can
// answer 406 (or choose an alternative) before doing any work.
func (c *Client) CanSend(method string) bool {
	m, ok := c.methods.Lookup(method)
	return ok && c.CanSendVersion(m.Since)
}

// Prepare builds the request for method with args: the version is the
// highest one the present arguments (and their values, Arg.Values) need,
// arguments above the cap are omitted (or refused, per their policy), a
// value above the cap is refused, nil arguments are absent.
func (c *Client) Prepare(ctx context.Context, method string, args map[string]any) (*Request, error) {
	m, ok := c.methods.Lookup(method)
	if !ok {
		return nil, fmt.Errorf("rpc: client has no method %q", method)
	}
	capV := c.cap()
	if !m.Since.ServedBy(capV) {
		return nil, &CapError{Method: method, Needs: m.Since, Cap: capV}
	}
	ver := m.Since
	params := make(map[string]json.RawMessage, len(args))
	for name, val := range args {
		a, ok := m.Arg(name)
		if !ok {
			return nil, fmt.Errorf("rpc: %s has no argument %q", method, name)
		}
		if isNil(val) {
			continue
		}
		if !a.Since.ServedBy(capV) {
			if a.Policy == RefuseAboveCap {
				return nil, &CapError{Method: method, Arg: name, Needs: a.Since, Cap: capV}
			}
			continue
		}
		raw, err := encodeValue(c.codec, val)
		if err != nil {
			return nil, fmt.Errorf("rpc: %s: encode %s: %w", method, name, err)
		}
		since, newValue := a.valueSince(raw)
		if !since.ServedBy(capV) {
			return nil, &CapError{Method: method, Arg: fmt.Sprintf("%s=%q", name, newValue), Needs: since, Cap: capV}
		}
		params[name] = raw
		ver = version.Max(ver, since)
	}
	for _, a := range m.Args {
		if _, ok := params[a.Name]; a.Required && !ok {
			return nil, fmt.Errorf("rpc: %s: missing required argument %s", method, a.Name)
		}
	}
	id := RequestID(ctx)
	if id == "" {
		id = "req-" + uuid.NewString()
	}
	return &Request{Method: method, Version: ver.String(), Params: params, RequestID: id, User: User(ctx)}, nil
}

// Call sends method to host and waits for its reply.
func (c *Client) Call(ctx context.Context, host, method string, args map[string]any) (Reply, error) {
	req, err := c.Prepare(ctx, method, args)
	if err != nil {
		return Reply{}, err
	}
	raw, err := c.tr.Send(ctx, host, req)
	if err != nil {
		return Reply{}, err
	}
	return Reply{raw: raw, codec: c.codec}, nil
}

// Cast sends method to host without waiting for it to run.
func (c *Client) Cast(ctx context.Context, host, method string, args map[string]any) error {
	req, err := c.Prepare(ctx, method, args)
	if err != nil {
		return err
	}
	req.Cast = true
	_, err = c.tr.Send(ctx, host, req)
	return err
}

// Reply is a call's result.
type Reply struct {
	raw   json.RawMessage
	codec ObjectCodec
}

// Raw returns the encoded result.
func (r Reply) Raw() json.RawMessage { return r.raw }

// Decode JSON-decodes a plain result into v.
func (r Reply) Decode(v any) error {
	if len(r.raw) == 0 {
		return nil
	}
	return json.Unmarshal(r.raw, v)
}

// Object hydrates an object result at latest, dropping conversion changes
// (the client side of reference/ironic.md §2.1).
func (r Reply) Object() (any, error) {
	if !r.codec.IsObject(r.raw) {
		return nil, fmt.Errorf("rpc: reply is not an object: %.80s", r.raw)
	}
	return r.codec.Decode(r.raw, false)
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func:
		return rv.IsNil()
	}
	return false
}
