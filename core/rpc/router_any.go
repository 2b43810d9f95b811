package rpc

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
)

// AnyHost returns a live conductor picked at random (Ironic's
// get_random_topic), for calls that belong to no node. With no live
// conductor it refreshes once, then answers TemporaryFailure.
func (r *Router) AnyHost(ctx context.Context) (string, error) {
	if r.stale() {
		if err := r.Refresh(ctx); err != nil {
			return "", err
		}
	}
	if h := r.pickAny(); h != "" {
		return h, nil
	}
	if err := r.Refresh(ctx); err != nil {
		return "", err
	}
	if h := r.pickAny(); h != "" {
		return h, nil
	}
	return "", &TemporaryFailure{Reason: "No conductor service is alive."}
}

func (r *Router) pickAny() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hosts []string
	for _, ring := range r.rings {
		for _, h := range ring.Hosts() {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	if len(hosts) == 0 {
		return ""
	}
	slices.Sort(hosts)
	return hosts[rand.IntN(len(hosts))]
}

// CallAny calls method on a live conductor picked at random; when that
// conductor cannot be reached or is draining, it retries once on another
// pick after refreshing the rings (as CallNode).
func (c *Client) CallAny(ctx context.Context, r *Router, method string, args map[string]any) (Reply, error) {
	host, err := r.AnyHost(ctx)
	if err != nil {
		return Reply{}, err
	}
	reply, err := c.Call(ctx, host, method, args)
	if !retryOnFreshRing(err) {
		return reply, err
	}
	if rerr := r.Refresh(ctx); rerr != nil {
		return Reply{}, errors.Join(err, rerr)
	}
	if host, err = r.AnyHost(ctx); err != nil {
		return Reply{}, err
	}
	return c.Call(ctx, host, method, args)
}
