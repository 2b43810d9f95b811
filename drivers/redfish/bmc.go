package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// errNoSlot: every request slot of the BMC stayed busy until the caller's
// deadline. Not the BMC's failure (the breaker ignores it) but retryable.
var errNoSlot = errors.New("all of the BMC's request slots stayed busy")

// bmcKey identifies one BMC connection: nodes that share an address and a
// user share a session. The TLS and auth settings are part of the key
// because they shape the client.
type bmcKey struct{ address, username, verifyCA, authType string }

// bmc is the driver's state for one BMC: its HTTP client, its one
// authenticated gofish client (a session, or basic credentials), the
// request budget and the circuit breakers.
type bmc struct {
	key   bmcKey
	opts  Options
	log   *slog.Logger
	hc    *http.Client
	slots chan struct{} // the session budget: requests in flight
	login chan struct{} // one login at a time; a channel so waiting obeys ctx

	mu       sync.Mutex
	client   *gofish.APIClient // nil until the first login and after a 401
	password string            // the one client was made with
	mode     string            // AuthSession, AuthBasic or "" (anonymous)
	sole     string            // the only system's path, once discovered
	breakers map[string]*breaker
	idle     *time.Timer // logs the session out when no call used it for a while
}

// pool holds every BMC the driver has talked to, for the life of the
// process (or until Close).
type pool struct {
	opts Options
	log  *slog.Logger
	mu   sync.Mutex
	bmcs map[bmcKey]*bmc
}

// get returns the BMC for ni, creating it on first use.
func (p *pool) get(ni nodeInfo) (*bmc, error) {
	key := bmcKey{ni.address, ni.username, ni.verifyCA, ni.authType}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.bmcs[key]; ok {
		return b, nil
	}
	hc, err := httpClient(p.opts.ConnectionTimeout, p.opts.SessionBudgetPerBMC, ni.verifyCA)
	if err != nil {
		return nil, &plugins.InvalidDriverInfoError{Invalid: []string{KeyVerifyCA}}
	}
	b := &bmc{
		key: key, opts: p.opts, hc: hc,
		log:      p.log.With("bmc", ni.address),
		slots:    make(chan struct{}, p.opts.SessionBudgetPerBMC),
		login:    make(chan struct{}, 1),
		breakers: map[string]*breaker{},
	}
	p.bmcs[key] = b
	return b, nil
}

// breaker returns the breaker of one system of the BMC: on an endpoint
// serving many systems (a chassis manager, rivet-sim) one wedged system
// does not fence its neighbours.
func (b *bmc) breaker(system string) *breaker {
	b.mu.Lock()
	defer b.mu.Unlock()
	br, ok := b.breakers[system]
	if !ok {
		br = newBreaker(b.opts.BreakerThreshold, b.opts.BreakerCooldown, b.opts.Now)
		b.breakers[system] = br
	}
	return br
}

// run calls fn with an authenticated client bound to ctx, inside the BMC's
// request budget. A session the BMC no longer knows (401) is dropped and fn
// is run once more with a fresh login; gofish never logs in again itself.
func (b *bmc) run(ctx context.Context, ni nodeInfo, fn func(*gofish.APIClient) error) error {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w (budget %d): %w", errNoSlot, cap(b.slots), ctx.Err())
	}
	defer func() { <-b.slots }()
	defer b.touch()
	for attempt := 0; ; attempt++ {
		c, err := b.connect(ctx, ni)
		if err != nil {
			return err
		}
		err = fn(c.WithContext(ctx))
		if attempt == 0 && classify(ctx, err) == failAuth && b.dropSession(c) {
			b.log.Info("redfish session refused; logging in again")
			continue
		}
		return err
	}
}

// dropSession forgets c when it is the BMC's current session client and
// reports whether it did.
func (b *bmc) dropSession(c *gofish.APIClient) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mode != AuthSession || b.client != c {
		return false
	}
	b.client = nil
	return true
}

// connect returns the BMC's client, logging in when there is none or the
// node's password differs from the one it was made with (a changed
// password must not keep a stale session alive).
func (b *bmc) connect(ctx context.Context, ni nodeInfo) (*gofish.APIClient, error) {
	if c := b.current(ni); c != nil {
		return c, nil
	}
	select {
	case b.login <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-b.login }()
	if c := b.current(ni); c != nil { // another call logged in meanwhile
		return c, nil
	}
	b.mu.Lock()
	stale, staleMode := b.client, b.mode
	b.mu.Unlock()
	if stale != nil {
		b.log.Info("redfish password changed; replacing the client")
		if staleMode == AuthSession {
			stale.WithContext(ctx).Logout()
		}
		b.mu.Lock()
		if b.client == stale {
			b.client = nil
		}
		b.mu.Unlock()
	}
	c, mode, err := b.newClient(ctx, ni)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.client, b.password, b.mode = c, ni.password, mode
	b.mu.Unlock()
	return c, nil
}

func (b *bmc) current(ni nodeInfo) *gofish.APIClient {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client != nil && b.password == ni.password {
		return b.client
	}
	return nil
}

// systemPath is the node's system: as driver_info names it, or the BMC's
// only system. Listing reads the collection alone, not every member.
func (b *bmc) systemPath(c *gofish.APIClient, ni nodeInfo) (string, error) {
	if p := ni.systemPath(); p != "" {
		return p, nil
	}
	b.mu.Lock()
	sole := b.sole
	b.mu.Unlock()
	if sole != "" {
		return sole, nil
	}
	resp, err := c.Get("/redfish/v1/Systems")
	if err != nil {
		return "", err
	}
	defer schemas.DeferredCleanupHTTPResponse(resp)
	var coll struct {
		Members []struct {
			ID string `json:"@odata.id"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&coll); err != nil {
		return "", fmt.Errorf("decode system collection: %w", err)
	}
	if len(coll.Members) != 1 {
		return "", fmt.Errorf("the BMC has %d systems: %w", len(coll.Members),
			&plugins.InvalidDriverInfoError{Missing: []string{KeySystemID}})
	}
	b.mu.Lock()
	b.sole = coll.Members[0].ID
	b.mu.Unlock()
	return coll.Members[0].ID, nil
}

// touch restarts the idle timer.
func (b *bmc) touch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.idle == nil {
		b.idle = time.AfterFunc(b.opts.SessionIdleTimeout, b.logoutIdle)
		return
	}
	b.idle.Reset(b.opts.SessionIdleTimeout)
}

// logoutIdle logs out when no call is in flight: it takes every request
// slot without waiting, so no call can be holding the session it ends.
// When a call is running, that call's touch re-arms the timer.
func (b *bmc) logoutIdle() {
	taken := 0
	defer func() {
		for range taken {
			<-b.slots
		}
	}()
	for range cap(b.slots) {
		select {
		case b.slots <- struct{}{}:
			taken++
		default:
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.ConnectionTimeout)
	defer cancel()
	b.log.Debug("redfish session idle; logging out")
	b.logout(ctx)
}

// close stops the idle timer and logs out.
func (b *bmc) close(ctx context.Context) {
	b.mu.Lock()
	if b.idle != nil {
		b.idle.Stop()
	}
	b.mu.Unlock()
	b.logout(ctx)
}

// logout ends the BMC's session, if it has one.
func (b *bmc) logout(ctx context.Context) {
	b.mu.Lock()
	c, mode := b.client, b.mode
	b.client = nil
	b.mu.Unlock()
	if c != nil && mode == AuthSession {
		c.WithContext(ctx).Logout()
	}
	b.hc.CloseIdleConnections()
}
