package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// waitFor polls a node until cond holds, a failure state shows, or the
// workload's timeout passes.
func (b *bench) waitFor(ctx context.Context, uuid string, what string, cond func(node) bool) error {
	deadline := time.Now().Add(b.o.timeout)
	for delay := 20 * time.Millisecond; ; delay = min(delay*2, 500*time.Millisecond) {
		var n node
		if err := b.c.do(ctx, http.MethodGet, "/v1/nodes/"+uuid, nil, http.StatusOK, &n); err != nil {
			return err
		}
		if cond(n) {
			return nil
		}
		if n.ProvisionState != nil && failed(*n.ProvisionState) {
			return fmt.Errorf("node %s went to %s waiting for %s: %v", uuid, *n.ProvisionState, what, deref(n.LastError))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s: %s not reached within %s", uuid, what, b.o.timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

func failed(state string) bool {
	switch state {
	case "error", "deploy failed", "clean failed", "inspect failed", "adopt failed":
		return true
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func power(ctx context.Context, b *bench) (Result, error) {
	nodes, err := b.need(b.o.powerNodes)
	if err != nil {
		return Result{}, err
	}
	lat, errs, elapsed := parallel(ctx, len(nodes), b.o.concurrency, func(ctx context.Context, i int) error {
		body := map[string]any{"target": "power on"}
		if err := b.c.do(ctx, http.MethodPut, "/v1/nodes/"+nodes[i]+"/states/power", body, http.StatusAccepted, nil); err != nil {
			return err
		}
		return b.waitFor(ctx, nodes[i], "power on", func(n node) bool { return n.PowerState != nil && *n.PowerState == "power on" })
	})
	r := lat.result(fmt.Sprintf("power-%d", len(nodes)), b.o.concurrency, errs, elapsed)
	r.Note = "per-request figures are API → target reached for one node"
	return r, nil
}

// lifecycle walks nodes through manage → provide → active → deleted.
func lifecycle(ctx context.Context, b *bench) (Result, error) {
	nodes, err := b.need(b.o.lifecycleNodes)
	if err != nil {
		return Result{}, err
	}
	steps := []struct{ verb, want string }{{"manage", "manageable"}, {"provide", "available"}, {"active", "active"}, {"deleted", "available"}}
	lat, errs, elapsed := parallel(ctx, len(nodes), b.o.concurrency, func(ctx context.Context, i int) error {
		for _, s := range steps {
			body := map[string]any{"target": s.verb}
			if err := b.c.do(ctx, http.MethodPut, "/v1/nodes/"+nodes[i]+"/states/provision", body, http.StatusAccepted, nil); err != nil {
				return err
			}
			want := s.want
			if err := b.waitFor(ctx, nodes[i], want, func(n node) bool { return n.ProvisionState != nil && *n.ProvisionState == want }); err != nil {
				return err
			}
		}
		return nil
	})
	r := lat.result(fmt.Sprintf("lifecycle-%d", len(nodes)), b.o.concurrency, errs, elapsed)
	r.Note = "per-request figures are one node's whole lifecycle"
	return r, nil
}

// cleanup deletes the nodes the run enrolled, best effort.
func (b *bench) cleanup(ctx context.Context) {
	b.mu.Lock()
	nodes := b.nodes
	b.mu.Unlock()
	parallel(ctx, len(nodes), b.o.concurrency, func(ctx context.Context, i int) error {
		return b.c.do(ctx, http.MethodDelete, "/v1/nodes/"+nodes[i], nil, http.StatusNoContent, nil)
	})
}
