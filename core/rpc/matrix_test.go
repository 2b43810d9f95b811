package rpc

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/rivetmetal/rivet/core/version"
)

var v = version.MustParse

func newTable(t testing.TB) *Methods {
	m, err := NewMethods(v("1.1"),
		Method{Name: "power", Since: v("1.0"), Args: []Arg{
			{Name: "node_id", Since: v("1.0"), Required: true},
			{Name: "state", Since: v("1.0"), Values: map[string]version.Version{"soft": v("1.1")}},
			{Name: "timeout", Since: v("1.1")}}},
		Method{Name: "clean", Since: v("1.0"), Args: []Arg{
			{Name: "node_id", Since: v("1.0"), Required: true},
			{Name: "disable_ramdisk", Since: v("1.1"), Policy: RefuseAboveCap}}},
		Method{Name: "nmi", Since: v("1.1"), Args: []Arg{{Name: "node_id", Since: v("1.1"), Required: true}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// echoServer answers every method with the version and argument names it saw.
func echoServer(t testing.TB, m *Methods) *Server {
	s := NewServer(m, PlainCodec{}, slog.New(slog.NewTextHandler(io.Discard, nil)), context.Background())
	for _, name := range m.Names() {
		s.Handle(name, func(_ context.Context, p Params) (any, error) {
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

func TestCanSendVersion(t *testing.T) {
	c := NewClient(newTable(t), func() version.Version { return v("1.0") }, PlainCodec{}, nil)
	if !c.CanSendVersion(v("1.0")) || c.CanSendVersion(v("1.1")) || c.CanSendVersion(v("2.0")) {
		t.Fatal("CanSendVersion disagrees with the cap 1.0")
	}
	if c.CanSend("nmi") || !c.CanSend("power") || c.CanSend("nope") {
		t.Fatal("CanSend disagrees with the table")
	}
}
