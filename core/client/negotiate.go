package client

import (
	"context"
	"net/http"

	"github.com/rivetmetal/rivet/core/version"
)

// negotiation is the client's microversion state; Client.mu guards it.
type negotiation struct {
	req Request
	// current is the version sent when req.Kind is not Latest.
	current version.Version
	// effective is the version the server last said it applied.
	effective version.Version
	// confirmed is set once the server answered with version headers, or
	// once it is known to have none (3A).
	confirmed                              bool
	downgraded, fromCache, noMicroversions bool
}

// start sets the first version to send: the user's, or the cached one for
// the endpoint, or the highest the client knows.
func (n *negotiation) start(r Request, c *Client) {
	n.req = r
	switch r.Kind {
	case Exact:
		n.current = r.Version
	case Negotiate:
		n.current = c.clientMax
		if c.cache != nil {
			if v, ok := c.cache.Load(c.endpoint); ok && c.clientMin.Compare(v) <= 0 && v.Compare(c.clientMax) <= 0 {
				n.current, n.fromCache = v, true
			}
		}
	}
}

// Negotiation reports how the client's version was chosen.
type Negotiation struct {
	// Requested is what the caller asked for.
	Requested Request
	// Sent is the header value the client sends now: "1.10" or "latest".
	Sent string
	// Effective is the version the server last said it applied, or 1.1 for a
	// server without microversions; zero before the first answer.
	Effective version.Version
	// Confirmed is set once the server has answered.
	Confirmed bool
	// Downgraded is set when a 406 made the client step down (7A).
	Downgraded bool
	// FromCache is set when the starting version came from the cache.
	FromCache bool
	// NoMicroversions is set when the server sent no version headers (3A).
	NoMicroversions bool
}

// Negotiation returns the client's current version state.
func (c *Client) Negotiation() Negotiation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Negotiation{Requested: c.st.req, Sent: c.versionHeaderLocked(), Effective: c.st.effective,
		Confirmed: c.st.confirmed, Downgraded: c.st.downgraded, FromCache: c.st.fromCache, NoMicroversions: c.st.noMicroversions}
}

// Negotiate settles the version with one GET of the /v1 document unless
// the server has already answered this client. Callers that fan out many
// requests call it first so that they negotiate once.
func (c *Client) Negotiate(ctx context.Context) error {
	c.mu.Lock()
	done := c.st.confirmed
	c.mu.Unlock()
	if done {
		return nil
	}
	_, err := c.do(ctx, http.MethodGet, "", nil, nil, http.StatusOK)
	return err
}

// probeIfUnconfirmed negotiates before a change when the version came from
// the user and the server has not yet answered.
func (c *Client) probeIfUnconfirmed(ctx context.Context) error {
	c.mu.Lock()
	need := !c.st.confirmed && c.st.req.Kind != Negotiate
	c.mu.Unlock()
	if !need {
		return nil
	}
	return c.Negotiate(ctx)
}

func (c *Client) versionHeader() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.versionHeaderLocked()
}

func (c *Client) versionHeaderLocked() string {
	if c.st.req.Kind == Latest {
		return "latest"
	}
	return c.st.current.String()
}

// on406 handles a 406 answer to a request sent with version sent. It
// returns retry when the client stepped down to a version both sides
// speak (7A, once per request), a *VersionError when the versions cannot
// agree (5, 6, 7B), and neither when the 406 is not about the version
// range (a feature newer than the version: the caller's *APIError).
func (c *Client) on406(h http.Header, sent string, mayRetry bool) (bool, error) {
	smin, err1 := version.Parse(h.Get(HeaderMinVersion))
	smax, err2 := version.Parse(h.Get(HeaderMaxVersion))
	asked, err3 := version.Parse(sent)
	if err1 != nil || err2 != nil || err3 != nil {
		return false, nil
	}
	if smin.Compare(asked) <= 0 && asked.Compare(smax) <= 0 {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	verr := &VersionError{Endpoint: c.endpoint, Requested: sent, ClientMin: c.clientMin, ClientMax: c.clientMax,
		ServerMin: smin, ServerMax: smax, UserGiven: c.st.req.Kind != Negotiate}
	if c.st.req.Kind != Negotiate || !mayRetry {
		return false, verr
	}
	cand := asked
	if smax.Less(cand) {
		cand = smax
	}
	if cand.Less(smin) || cand.Less(c.clientMin) || cand.Major != c.clientMin.Major {
		return false, verr
	}
	if c.st.current == asked {
		c.st.current, c.st.downgraded = cand, true
		c.log.Debug("api version negotiated", "endpoint", c.endpoint, "from", asked.String(), "to", cand.String(),
			"server_min", smin.String(), "server_max", smax.String())
		if c.cache != nil {
			c.cache.Store(c.endpoint, cand)
		}
	}
	return true, nil
}

// observe records the version the server applied. An answer without any
// version header comes from a server that predates microversions: with a
// user-given version that is an error (3B); otherwise the client goes on
// at 1.1 (3A). Only a success switches to 1.1, so a proxy's error page does
// not poison the cache.
func (c *Client) observe(h http.Header, sent string, status int) error {
	served := h.Get(HeaderVersion)
	c.mu.Lock()
	defer c.mu.Unlock()
	if served != "" {
		if v, err := version.Parse(served); err == nil {
			c.st.effective, c.st.confirmed = v, true
		}
		return nil
	}
	if h.Get(HeaderMinVersion) != "" || h.Get(HeaderMaxVersion) != "" || status >= 500 {
		return nil
	}
	if c.st.req.Kind != Negotiate {
		return &VersionError{Endpoint: c.endpoint, Requested: sent, ClientMin: c.clientMin, ClientMax: c.clientMax,
			NoMicroversions: true, UserGiven: true}
	}
	if status < 200 || status > 299 {
		return nil
	}
	c.st.effective, c.st.confirmed, c.st.noMicroversions = MinVersion, true, true
	if c.st.current != MinVersion {
		c.st.current = MinVersion
		c.log.Debug("api server has no microversions; using 1.1", "endpoint", c.endpoint)
		if c.cache != nil {
			c.cache.Store(c.endpoint, MinVersion)
		}
	}
	return nil
}

// Require settles the version and fails with a *FeatureVersionError, before
// anything is sent, when requests do not go out at v or later: what feature
// (added in microversion v) needs. "latest" counts as the version the server
// applied. A version taken from the cache that is too old is negotiated
// afresh first, since the server may have been upgraded (or unpinned) since.
func (c *Client) Require(ctx context.Context, v version.Version, feature string) error {
	if v.Compare(MinVersion) <= 0 {
		return nil
	}
	if err := c.Negotiate(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	if c.st.req.Kind == Negotiate && c.st.fromCache && c.st.current.Less(v) {
		c.st.current, c.st.fromCache, c.st.confirmed = c.clientMax, false, false
		c.mu.Unlock()
		if err := c.Negotiate(ctx); err != nil {
			return err
		}
		c.mu.Lock()
	}
	using := c.st.effective
	if c.st.req.Kind == Exact {
		using = c.st.req.Version
	} else if c.st.req.Kind == Negotiate {
		using = c.st.current
	}
	ferr := &FeatureVersionError{Feature: feature, Needs: v, Served: using, Endpoint: c.endpoint, UserGiven: c.st.req.Kind == Exact}
	c.mu.Unlock()
	if using.Less(v) {
		return ferr
	}
	return nil
}
