package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
)

// Deps is what the REST API needs. rivet api builds it from configuration;
// all-in-one and tests build it in process (Conductor may be a fake).
type Deps struct {
	// Store reads and writes objects; the API reads the DB directly, as Ironic.
	Store *db.Store
	// Conductor takes every call that touches hardware or node state.
	Conductor Conductor
	// Conductors lists the live conductors, for /v1/drivers.
	Conductors rpc.ConductorLister
	// Catalog gives the hardware interface catalog for /v1/drivers at 1.30;
	// nil builds one over the hardware interface rows of the conductors
	// Conductors lists, cached for CatalogTTL.
	Catalog *catalog.Cache
	// CatalogTTL is how long the default Catalog keeps what it read (rivet
	// api uses [DEFAULT] hash_ring_reset_interval); 0 reads every time.
	CatalogTTL time.Duration
	// Pinner gives the effective release: its API version is the maximum
	// microversion, read on every request.
	Pinner *release.Pinner
	// Logger receives one line per request and every internal error.
	Logger *slog.Logger
	// Auth checks credentials; nil means noauth.
	Auth Authenticator
	// Projects gives http_basic users a project and role ([api]
	// http_basic_projects_file); nil leaves every user unrestricted.
	Projects ProjectScopes
	// ProjectAdminManagesOwnNodes lets a project admin create nodes
	// (owned by its project) and delete its project's nodes ([api]
	// project_admin_can_manage_own_nodes, API 1.80's self-service).
	ProjectAdminManagesOwnNodes bool
	// MaxLimit is [api] max_limit (default 1000).
	MaxLimit int
	// MaxBodyBytes is [api] max_request_body_size (default 1 MiB).
	MaxBodyBytes int64
	// Links say where links, next and Location point: [api]
	// public_endpoint and trusted_proxies.
	Links Links
	// MaxPatchOps is [api] max_patch_operations: the most operations one
	// JSON-patch body may hold (default DefaultMaxPatchOps).
	MaxPatchOps int
	// RateLimit limits requests per client IP; the zero value disables it.
	RateLimit RateLimit
	// Now is the clock of the rate limiter and of the failed-login
	// back-off; nil means time.Now.
	Now func() time.Time
	// Metrics, when set, receives the request metrics and is served at
	// /metrics.
	Metrics *prometheus.Registry
	// Ring maps nodes to conductors for the node's conductor field and
	// ?conductor= (1.49); nil builds one over Conductors.
	Ring *rpc.Router
	// HeartbeatTimeout is [conductor] heartbeat_timeout: a conductor
	// heartbeated longer ago is not alive in /v1/conductors (default 60 s).
	HeartbeatTimeout time.Duration
	// AutoDiscovery is [auto_discovery]: with Enabled, inspection data no
	// node matches enrolls a node of hardware type Driver.
	AutoDiscovery AutoDiscovery

	// slowNodeList makes node lists take the general path (objects and a
	// view map per node) instead of the fast path or the streamed views,
	// for the tests that compare them.
	slowNodeList bool
	// fastNodeLists, when set, counts the node lists the fast path served.
	fastNodeLists *atomic.Int64
	// patchOpSeen, when set, is called for each operation of a PATCH body
	// as it is validated, so a test can see where the work stopped.
	patchOpSeen func(i int)
	// testMaxAPI, when set, raises the maximum microversion above the
	// release table's HEAD while unpinned: the tests of a version that is
	// implemented before every version below it is (the advertised maximum
	// is the highest N with every version up to N done) run at it. It is
	// never set outside this package's tests.
	testMaxAPI version.Version
}

// defaultRingExponent is [DEFAULT] hash_partition_exponent's default, for
// a ring the API builds itself.
const defaultRingExponent = 5

// server holds the dependencies of every handler.
// AutoDiscovery is the API's part of [auto_discovery].
type AutoDiscovery struct {
	Enabled bool
	Driver  string
}

type server struct {
	Deps
	reg     *objects.Registry
	rg      Range
	limiter *limiter // nil: no rate limit
	// logins counts failed logins per client (http_basic).
	logins *htpasswd.Backoff
	// unpinned caches unpinnedFields (unpinnedKey → []string).
	unpinned sync.Map
	// nodeViews caches nodeViewFieldsAt (nodeViewKey → []*nodeViewField).
	nodeViews sync.Map
	// ring is Deps.Ring or one built over Conductors.
	ring *rpc.Router
}

// New returns the REST API as one handler: request ids, metrics, body
// limits, auth, microversion negotiation and every Ironic v1 resource Rivet
// serves, with Ironic's error body on every error.
func New(d Deps) (http.Handler, error) {
	if d.Store == nil || d.Conductor == nil || d.Pinner == nil {
		return nil, errors.New("api: Store, Conductor and Pinner are required")
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.MaxLimit <= 0 {
		d.MaxLimit = 1000
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = 1 << 20
	}
	if d.MaxPatchOps <= 0 {
		d.MaxPatchOps = DefaultMaxPatchOps
	}
	if d.Conductors == nil {
		d.Conductors = func(context.Context) ([]rpc.ConductorInfo, error) { return nil, nil }
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &server{Deps: d, reg: d.Store.Registry(), limiter: newLimiter(d.RateLimit, d.Now), logins: htpasswd.NewBackoff(d.Now),
		rg: Range{Min: release.MinAPI, Max: func() version.Version {
			e := d.Pinner.Effective()
			if e.Version == release.HeadKey && e.API.Less(d.testMaxAPI) {
				return d.testMaxAPI
			}
			return e.API
		}}}
	s.ring = d.Ring
	if s.ring == nil {
		s.ring = rpc.NewRouter(d.Conductors, defaultRingExponent, d.CatalogTTL)
	}
	if s.Catalog == nil {
		s.Catalog = &catalog.Cache{Load: s.liveCatalog, TTL: d.CatalogTTL}
	}
	var m *metrics
	if d.Metrics != nil {
		var err error
		if m, err = newMetrics(d.Metrics); err != nil {
			return nil, err
		}
	}
	return s.chain(s.routes(), m), nil
}
