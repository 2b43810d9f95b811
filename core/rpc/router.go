package rpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/hashring"
)

// ConductorInfo is what routing needs to know of one live conductor.
type ConductorInfo struct {
	// Hostname is the name the conductor registered ("host" or "host:port");
	// it is both the ring member and the transport address.
	Hostname      string
	Group         string
	HardwareTypes []string
}

// ConductorLister returns the live conductors (heartbeat within
// [conductor] heartbeat_timeout).
type ConductorLister func(ctx context.Context) ([]ConductorInfo, error)

// Target is what routing needs to know of a node.
type Target struct {
	UUID   string
	Driver string // hardware type
	Group  string // conductor_group
}

// Router maps nodes to conductors with one hash ring per (conductor group,
// hardware type) over live conductors, rebuilt when older than the reset
// interval and on demand after a failure.
type Router struct {
	list     ConductorLister
	exponent int
	ttl      time.Duration
	now      func() time.Time

	mu    sync.Mutex
	rings map[string]*hashring.Ring
	live  int
	built time.Time
}

// NewRouter returns a router. exponent is [DEFAULT] hash_partition_exponent
// and ttl [DEFAULT] hash_ring_reset_interval.
func NewRouter(list ConductorLister, exponent int, ttl time.Duration) *Router {
	return &Router{list: list, exponent: exponent, ttl: ttl, now: time.Now}
}

func ringKey(group, hw string) string { return strings.ToLower(group) + ":" + hw }

// Refresh rebuilds the rings from the live conductors now.
func (r *Router) Refresh(ctx context.Context) error {
	cs, err := r.list(ctx)
	if err != nil {
		return fmt.Errorf("list live conductors: %w", err)
	}
	members := map[string][]string{}
	for _, c := range cs {
		for _, hw := range c.HardwareTypes {
			k := ringKey(c.Group, hw)
			members[k] = append(members[k], c.Hostname)
		}
	}
	rings := make(map[string]*hashring.Ring, len(members))
	for k, hosts := range members {
		ring, err := hashring.New(hosts, r.exponent)
		if err != nil {
			return err
		}
		rings[k] = ring
	}
	r.mu.Lock()
	r.rings, r.live, r.built = rings, len(cs), r.now()
	r.mu.Unlock()
	return nil
}

func (r *Router) lookup(t Target) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == 0 {
		return "", &TemporaryFailure{Reason: "No conductor service is alive."}
	}
	ring, ok := r.rings[ringKey(t.Group, t.Driver)]
	if !ok {
		nv := &NoValidHost{Driver: t.Driver, Group: t.Group, EnabledKnown: true}
		prefix := ringKey(t.Group, "")
		for k := range r.rings {
			if hw, found := strings.CutPrefix(k, prefix); found {
				nv.Enabled = append(nv.Enabled, hw)
			}
		}
		slices.Sort(nv.Enabled)
		return "", nv
	}
	return ring.Get([]byte(t.UUID))
}

func (r *Router) stale() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rings == nil || r.now().Sub(r.built) >= r.ttl
}

// HostFor returns the conductor that owns t. Like Ironic it rebuilds the
// rings once and retries when the answer is "nobody", since membership may
// just have changed.
func (r *Router) HostFor(ctx context.Context, t Target) (string, error) {
	if r.stale() {
		if err := r.Refresh(ctx); err != nil {
			return "", err
		}
	}
	host, err := r.lookup(t)
	if err == nil {
		return host, nil
	}
	var tf *TemporaryFailure
	var nv *NoValidHost
	if !errors.As(err, &tf) && !errors.As(err, &nv) {
		return "", err
	}
	if rerr := r.Refresh(ctx); rerr != nil {
		return "", rerr
	}
	return r.lookup(t)
}

// CallNode routes method to the conductor owning t and calls it. When that
// conductor cannot be reached, or answers TemporaryFailure because it is
// shutting down (in both cases nothing was done), it refreshes the rings and
// retries once, so a conductor that just stopped is invisible to callers.
func (c *Client) CallNode(ctx context.Context, r *Router, t Target, method string, args map[string]any) (Reply, error) {
	return routed(ctx, r, t, func(host string) (Reply, error) { return c.Call(ctx, host, method, args) })
}

// CastNode is CallNode for a fire-and-forget call.
func (c *Client) CastNode(ctx context.Context, r *Router, t Target, method string, args map[string]any) error {
	_, err := routed(ctx, r, t, func(host string) (Reply, error) { return Reply{}, c.Cast(ctx, host, method, args) })
	return err
}

func routed(ctx context.Context, r *Router, t Target, send func(host string) (Reply, error)) (Reply, error) {
	host, err := r.HostFor(ctx, t)
	if err != nil {
		return Reply{}, err
	}
	reply, err := send(host)
	if !retryOnFreshRing(err) {
		return reply, err
	}
	if rerr := r.Refresh(ctx); rerr != nil {
		return Reply{}, errors.Join(err, rerr)
	}
	host, herr := r.lookup(t)
	if herr != nil {
		return Reply{}, herr
	}
	return send(host)
}

// retryOnFreshRing reports whether err guarantees the call was not acted
// on and another conductor may take it: the conductor was unreachable, or
// refused it with TemporaryFailure while draining.
func retryOnFreshRing(err error) bool {
	if errors.Is(err, ErrUnreachable) {
		return true
	}
	var c Classed
	return errors.As(err, &c) && c.ErrorClass() == (&TemporaryFailure{}).ErrorClass()
}
