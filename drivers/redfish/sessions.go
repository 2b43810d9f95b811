package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// firstSessionRetry is the first pause after a login the BMC refused for
// lack of sessions; it doubles up to Options.SessionRetryMax.
const firstSessionRetry = 250 * time.Millisecond

// sessionWait bounds, in ConnectionTimeouts, how long a login waits for the
// BMC to free a session (redfish_auth_type session).
const sessionWait = 3

// config is the gofish configuration every client of the BMC shares: our
// HTTP client untouched by gofish, kept-alive connections, and as many
// concurrent requests as the budget allows.
func (b *bmc) config(ni nodeInfo) gofish.ClientConfig {
	return gofish.ClientConfig{
		Endpoint:              ni.address,
		HTTPClient:            b.hc,
		NoModifyTransport:     true,
		ReuseConnections:      true,
		MaxConcurrentRequests: int64(cap(b.slots)),
	}
}

// newClient logs in as ni.authType says and returns the client and the mode
// it ended up with:
//   - basic: credentials on every request, no session;
//   - session: a session; when the BMC has none to spare, wait (backing
//     off) until it has or ctx ends (then ErrSessionLimit, retryable);
//   - auto: a session, or basic when the BMC has no session service or
//     none to spare, so a full BMC never blocks the conductor.
func (b *bmc) newClient(ctx context.Context, ni nodeInfo) (*gofish.APIClient, string, error) {
	cfg := b.config(ni)
	if ni.username == "" {
		c, err := gofish.ConnectContext(ctx, cfg)
		return c, "", err
	}
	if ni.authType == AuthBasic {
		c, err := b.basic(ctx, ni)
		return c, AuthBasic, err
	}
	anon, err := gofish.ConnectContext(ctx, cfg) // the service root is public
	if err != nil {
		return nil, "", err
	}
	// Waiting for a session is bounded even when the caller sets no
	// deadline: a BMC whose sessions are all held may stay full for good.
	ctx, cancel := context.WithTimeout(ctx, sessionWait*b.opts.ConnectionTimeout)
	defer cancel()
	delay := firstSessionRetry
	for {
		auth, err := anon.Service.CreateSession(ni.username, ni.password)
		switch {
		case err == nil:
			cfg.Session = &gofish.Session{ID: auth.Session, Token: auth.Token}
			c, err := gofish.ConnectContext(ctx, cfg)
			if err != nil {
				_ = anon.Service.DeleteSession(auth.Session)
				return nil, "", err
			}
			b.log.Debug("redfish session opened")
			return c, AuthSession, nil
		case noSessionService(err):
			if ni.authType == AuthAuto {
				b.log.Info("BMC has no session service; using basic auth")
				c, err := b.basic(ctx, ni)
				return c, AuthBasic, err
			}
			return nil, "", fmt.Errorf("the BMC has no session service; set %s to %s: %w",
				KeyAuthType, AuthBasic, plugins.ErrNotSupported)
		case !sessionLimit(err):
			return nil, "", err
		case ni.authType == AuthAuto:
			b.log.Warn("BMC has no session to spare; using basic auth")
			c, err := b.basic(ctx, ni)
			return c, AuthBasic, err
		}
		b.log.Info("BMC has no session to spare; waiting", "retry_in", delay)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, "", plugins.MarkRetryable(fmt.Errorf("%w: no session freed before the deadline", ErrSessionLimit))
		}
		delay = min(2*delay, b.opts.SessionRetryMax)
	}
}

// noSessionService reports whether a login failed because the service
// root links no session collection (sushy-tools, older BMCs) or the link
// answers 404. gofish refuses an empty link before sending anything, with a
// plain error in some paths and a *schemas.Error without status in others,
// so the text is what both share.
func noSessionService(err error) bool {
	var rf *schemas.Error
	if errors.As(err, &rf) && rf.HTTPReturnedStatusCode == http.StatusNotFound {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "no target provided")
}

// basic connects with HTTP basic credentials.
func (b *bmc) basic(ctx context.Context, ni nodeInfo) (*gofish.APIClient, error) {
	cfg := b.config(ni)
	cfg.Username, cfg.Password, cfg.BasicAuth = ni.username, ni.password, true
	return gofish.ConnectContext(ctx, cfg)
}

// sessionLimit reports whether a login was refused because the BMC has no
// session to spare: Redfish's SessionLimitExceeded, or any 503 to a login.
func sessionLimit(err error) bool {
	var rf *schemas.Error
	return isMessage(err, "SessionLimitExceeded") ||
		(errors.As(err, &rf) && rf.HTTPReturnedStatusCode == http.StatusServiceUnavailable)
}
