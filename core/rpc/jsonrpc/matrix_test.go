package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

var v = version.MustParse

// Release "old" speaks RPC 1.0; release "new" speaks 1.1, where power gained
// an optional timeout (omitted above the cap) and a new value "soft" of its
// state argument, clean gained disable_ramdisk (refused above the cap) and
// nmi is a new method.
func oldTable(t testing.TB) *rpc.Methods {
	m, err := rpc.NewMethods(v("1.0"),
		rpc.Method{Name: "power", Since: v("1.0"), Args: []rpc.Arg{{Name: "node_id", Since: v("1.0"), Required: true},
			{Name: "state", Since: v("1.0")}}},
		rpc.Method{Name: "clean", Since: v("1.0"), Args: []rpc.Arg{{Name: "node_id", Since: v("1.0"), Required: true}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newTable(t testing.TB) *rpc.Methods {
	m, err := rpc.NewMethods(v("1.1"),
		rpc.Method{Name: "power", Since: v("1.0"), Args: []rpc.Arg{
			{Name: "node_id", Since: v("1.0"), Required: true},
			{Name: "state", Since: v("1.0"), Values: map[string]version.Version{"soft": v("1.1")}},
			{Name: "timeout", Since: v("1.1")}}},
		rpc.Method{Name: "clean", Since: v("1.0"), Args: []rpc.Arg{
			{Name: "node_id", Since: v("1.0"), Required: true},
			{Name: "disable_ramdisk", Since: v("1.1"), Policy: rpc.RefuseAboveCap}}},
		rpc.Method{Name: "nmi", Since: v("1.1"), Args: []rpc.Arg{{Name: "node_id", Since: v("1.1"), Required: true}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// echoServer answers every method with the version and argument names it saw.
func echoServer(t testing.TB, m *rpc.Methods) *rpc.Server {
	s := rpc.NewServer(m, rpc.PlainCodec{}, slog.New(slog.NewTextHandler(io.Discard, nil)), context.Background())
	for _, name := range m.Names() {
		s.Handle(name, func(_ context.Context, p rpc.Params) (any, error) {
			got := map[string]any{"version": p.Version().String()}
			for _, a := range []string{"node_id", "state", "timeout", "disable_ramdisk"} {
				if p.Has(a) {
					got[a] = true
				}
			}
			return got, nil
		})
	}
	return s
}

type matrixCase struct {
	method  string
	args    map[string]any
	want    map[string]any // reply; nil when an error is expected
	wantErr any            // pointer to the typed error expected
}

func TestCompatibilityMatrix(t *testing.T) {
	node := map[string]any{"node_id": "n1"}
	withTimeout := map[string]any{"node_id": "n1", "timeout": 30}
	withRamdisk := map[string]any{"node_id": "n1", "disable_ramdisk": true}
	hard := map[string]any{"node_id": "n1", "state": "on"}
	soft := map[string]any{"node_id": "n1", "state": "soft"}
	ok := func(ver string, args ...string) map[string]any {
		m := map[string]any{"version": ver}
		for _, a := range args {
			m[a] = true
		}
		return m
	}
	capErr, unsupported := new(*rpc.CapError), new(*rpc.UnsupportedVersionError)
	type client struct {
		table func(testing.TB) *rpc.Methods
		cap   string
	}
	clients := map[string]client{
		"old client":          {oldTable, "1.0"},
		"new client pinned":   {newTable, "1.0"},
		"new client unpinned": {newTable, "1.1"},
	}
	servers := map[string]func(testing.TB) *rpc.Methods{"old server": oldTable, "new server": newTable}
	// cells[client][server] lists the calls and what each must give.
	cells := map[string]map[string][]matrixCase{
		"old client": {
			"old server": {{method: "power", args: node, want: ok("1.0", "node_id")}},
			"new server": {
				{method: "power", args: node, want: ok("1.0", "node_id")},
				{method: "power", args: hard, want: ok("1.0", "node_id", "state")},
			},
		},
		"new client pinned": {
			"old server": {
				{method: "power", args: withTimeout, want: ok("1.0", "node_id")},
				{method: "power", args: hard, want: ok("1.0", "node_id", "state")},
				{method: "power", args: soft, wantErr: capErr},
				{method: "nmi", args: node, wantErr: capErr},
				{method: "clean", args: withRamdisk, wantErr: capErr},
				{method: "clean", args: node, want: ok("1.0", "node_id")},
			},
			"new server": {
				{method: "power", args: withTimeout, want: ok("1.0", "node_id")},
				{method: "power", args: soft, wantErr: capErr},
				{method: "nmi", args: node, wantErr: capErr},
				{method: "clean", args: withRamdisk, wantErr: capErr},
			},
		},
		"new client unpinned": {
			"old server": {
				{method: "power", args: withTimeout, wantErr: unsupported},
				{method: "power", args: node, want: ok("1.0", "node_id")},
				// A new value is sent at its version, which an old server
				// refuses instead of misreading.
				{method: "power", args: soft, wantErr: unsupported},
				{method: "power", args: hard, want: ok("1.0", "node_id", "state")},
				{method: "nmi", args: node, wantErr: unsupported},
				{method: "clean", args: withRamdisk, wantErr: unsupported},
			},
			"new server": {
				{method: "power", args: withTimeout, want: ok("1.1", "node_id", "timeout")},
				{method: "power", args: soft, want: ok("1.1", "node_id", "state")},
				{method: "power", args: hard, want: ok("1.0", "node_id", "state")},
				{method: "nmi", args: node, want: ok("1.1", "node_id")},
				{method: "clean", args: withRamdisk, want: ok("1.1", "node_id", "disable_ramdisk")},
			},
		},
	}
	for cname, cl := range clients {
		for sname, stable := range servers {
			for _, tr := range []string{"jsonrpc", "local"} {
				t.Run(fmt.Sprintf("%s/%s/%s", cname, sname, tr), func(t *testing.T) {
					srv := echoServer(t, stable(t))
					var transport rpc.Transport = rpc.LocalTransport{Server: srv}
					host := "local"
					if tr == "jsonrpc" {
						hs := httptest.NewServer(NewHTTPHandler(srv, HTTPHandlerOptions{}))
						defer hs.Close()
						transport = NewHTTPTransport(HTTPTransportOptions{})
						host = hs.Listener.Addr().String()
					}
					capV := v(cl.cap)
					c := rpc.NewClient(cl.table(t), func() version.Version { return capV }, rpc.PlainCodec{}, transport)
					for _, call := range cells[cname][sname] {
						reply, err := c.Call(context.Background(), host, call.method, call.args)
						if call.wantErr != nil {
							switch target := call.wantErr.(type) {
							case **rpc.CapError:
								if !errors.As(err, target) {
									t.Errorf("%s%v: err = %v, want *CapError", call.method, call.args, err)
								}
							case **rpc.UnsupportedVersionError:
								var re *rpc.RemoteError
								if !errors.As(err, &re) || re.Class != "UnsupportedVersion" {
									t.Errorf("%s%v: err = %v, want UnsupportedVersion", call.method, call.args, err)
								}
							}
							continue
						}
						if err != nil {
							t.Errorf("%s%v: %v", call.method, call.args, err)
							continue
						}
						var got map[string]any
						if err := reply.Decode(&got); err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(call.want, got); diff != "" {
							t.Errorf("%s%v (-want +got):\n%s", call.method, call.args, diff)
						}
					}
				})
			}
		}
	}
}
