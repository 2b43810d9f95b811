package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/hashring"
	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

func staticLister(calls *atomic.Int32, sets ...[]rpc.ConductorInfo) rpc.ConductorLister {
	return func(context.Context) ([]rpc.ConductorInfo, error) {
		n := int(calls.Add(1)) - 1
		if n >= len(sets) {
			n = len(sets) - 1
		}
		return sets[n], nil
	}
}

// A conductor that stopped (connection refused) is skipped: the client
// rebuilds the ring from the live set and retries once on the survivor.
func TestCallNodeRetriesOnceOnUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	live := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	defer live.Close()
	alive := live.Listener.Addr().String()

	both := []rpc.ConductorInfo{{Hostname: dead, HardwareTypes: []string{"ipmi"}}, {Hostname: alive, HardwareTypes: []string{"ipmi"}}}
	ring, _ := hashring.New([]string{dead, alive}, 5)
	var uuid string
	for i := 0; uuid == ""; i++ {
		u := fmt.Sprintf("node-%d", i)
		if h, _ := ring.Get([]byte(u)); h == dead {
			uuid = u
		}
	}
	var calls atomic.Int32
	r := rpc.NewRouter(staticLister(&calls, both, both[1:]), 5, time.Hour)
	c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, NewHTTPTransport(HTTPTransportOptions{Timeout: 5 * time.Second}))
	reply, err := c.CallNode(context.Background(), r, rpc.Target{UUID: uuid, Driver: "ipmi"}, "power", map[string]any{"node_id": uuid})
	if err != nil {
		t.Fatalf("call after conductor loss: %v", err)
	}
	var got map[string]string
	if err := reply.Decode(&got); err != nil || got["node"] != uuid {
		t.Fatalf("reply %v, %v", got, err)
	}
	if calls.Load() != 2 {
		t.Fatalf("ring rebuilt %d times, want 2 (initial + after the failure)", calls.Load())
	}

	// When every conductor is gone the caller gets the dial error, once.
	calls.Store(0)
	r = rpc.NewRouter(staticLister(&calls, both[:1]), 5, time.Hour)
	_, err = c.CallNode(context.Background(), r, rpc.Target{UUID: uuid, Driver: "ipmi"}, "power", map[string]any{"node_id": uuid})
	if !errors.Is(err, rpc.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
}

// A conductor that is draining answers TemporaryFailure; the call moves to
// the survivor on a fresh ring.
func TestCallNodeRetriesOnceOnTemporaryFailure(t *testing.T) {
	draining := rpc.NewServer(newTable(t), rpc.PlainCodec{}, quietLog(), context.Background())
	draining.Handle("power", func(context.Context, rpc.Params) (any, error) {
		return nil, &rpc.TemporaryFailure{Reason: "conductor is shutting down"}
	})
	a := httptest.NewServer(NewHTTPHandler(draining, HTTPHandlerOptions{}))
	defer a.Close()
	b := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	defer b.Close()
	ha, hb := a.Listener.Addr().String(), b.Listener.Addr().String()
	both := []rpc.ConductorInfo{{Hostname: ha, HardwareTypes: []string{"ipmi"}}, {Hostname: hb, HardwareTypes: []string{"ipmi"}}}
	ring, _ := hashring.New([]string{ha, hb}, 5)
	ownedBy := func(host string) string {
		for i := 0; ; i++ {
			if h, _ := ring.Get([]byte(fmt.Sprintf("node-%d", i))); h == host {
				return fmt.Sprintf("node-%d", i)
			}
		}
	}
	uuid := ownedBy(ha)
	var calls atomic.Int32
	r := rpc.NewRouter(staticLister(&calls, both, both[1:]), 5, time.Hour)
	c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, NewHTTPTransport(HTTPTransportOptions{}))
	if _, err := c.CallNode(context.Background(), r, rpc.Target{UUID: uuid, Driver: "ipmi"}, "power", map[string]any{"node_id": uuid}); err != nil {
		t.Fatalf("call while the owner drains: %v", err)
	}
	// Any other error is the caller's answer: no second attempt.
	calls.Store(0)
	r = rpc.NewRouter(staticLister(&calls, both), 5, time.Hour)
	_, err := c.CallNode(context.Background(), r, rpc.Target{UUID: ownedBy(hb), Driver: "ipmi"}, "power", map[string]any{"node_id": "locked"})
	if err == nil || calls.Load() != 1 {
		t.Fatalf("NodeLocked: err=%v, ring rebuilt %d times (want 1)", err, calls.Load())
	}
}
