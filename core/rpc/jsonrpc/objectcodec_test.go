package jsonrpc

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

// Objects cross the wire through the versioned core: the server hydrates
// them at latest with changes kept, the client gets a reply object at latest.
func TestObjectsCrossTheWire(t *testing.T) {
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(release.Default(), release.Pin{})
	codec := rpc.ObjectCodecFor(reg, pinner)
	methods, err := rpc.NewMethods(v("1.0"), rpc.Method{Name: "update_node", Since: v("1.0"), Args: []rpc.Arg{{Name: "node", Since: v("1.0"), Required: true}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := rpc.NewServer(methods, codec, quietLog(), context.Background())
	var serverChanged []string
	srv.Handle("update_node", func(_ context.Context, p rpc.Params) (any, error) {
		obj, err := p.Object("node")
		if err != nil {
			return nil, err
		}
		node := obj.(*objects.Node)
		serverChanged, _ = reg.Changed(node)
		node.Maintenance = true
		return node, nil
	})
	hs := httptest.NewServer(NewHTTPHandler(srv, HTTPHandlerOptions{}))
	defer hs.Close()
	c := rpc.NewClient(methods, func() version.Version { return pinner.Effective().RPC }, codec, NewHTTPTransport(HTTPTransportOptions{}))

	obj, _ := reg.New("Node")
	node := obj.(*objects.Node)
	node.UUID, node.Driver = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "fake-hardware"
	_ = reg.ResetChanges(node)
	node.Extra = map[string]any{"owner": "ops"}

	reply, err := c.Call(context.Background(), hs.Listener.Addr().String(), "update_node", map[string]any{"node": node})
	if err != nil {
		t.Fatal(err)
	}
	if len(serverChanged) != 1 || serverChanged[0] != "extra" {
		t.Fatalf("server saw changes %v, want [extra]", serverChanged)
	}
	got, err := reply.Object()
	if err != nil {
		t.Fatal(err)
	}
	n := got.(*objects.Node)
	if !n.Maintenance || n.UUID != node.UUID || n.Extra["owner"] != "ops" {
		t.Fatalf("reply node %+v", n)
	}
}
