package jsonrpc

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

// TestVIFInfoCrossesTheWire: vif_info reaches the conductor whole, other
// keys included (Ironic's additionalProperties), over JSON-RPC, and the
// VIF list comes back typed.
func TestVIFInfoCrossesTheWire(t *testing.T) {
	srv := rpc.NewServer(rpc.ConductorMethods(), rpc.PlainCodec{}, slog.New(slog.DiscardHandler), context.Background())
	var got map[string]any
	srv.Handle("vif_attach", func(_ context.Context, p rpc.Params) (any, error) { return nil, p.Decode("vif_info", &got) })
	srv.Handle("vif_list", func(context.Context, rpc.Params) (any, error) { return []rpc.VIF{{ID: "vif-1"}}, nil })
	hs := httptest.NewServer(NewHTTPHandler(srv, HTTPHandlerOptions{}))
	defer hs.Close()
	c := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return rpc.APIVersion }, rpc.PlainCodec{}, NewHTTPTransport(HTTPTransportOptions{}))
	host := hs.Listener.Addr().String()
	if _, err := c.Call(context.Background(), host, "vif_attach",
		map[string]any{"node_id": "n1", "vif_info": map[string]any{"id": "vif-1", "port_uuid": "p"}}); err != nil {
		t.Fatal(err)
	}
	if got["id"] != "vif-1" || got["port_uuid"] != "p" || len(got) != 2 {
		t.Fatalf("vif_info = %v", got)
	}
	reply, err := c.Call(context.Background(), host, "vif_list", map[string]any{"node_id": "n1"})
	var vifs []rpc.VIF
	if err == nil {
		err = reply.Decode(&vifs)
	}
	if err != nil || len(vifs) != 1 || vifs[0].ID != "vif-1" {
		t.Fatalf("vif_list = %v, %v", vifs, err)
	}
}
