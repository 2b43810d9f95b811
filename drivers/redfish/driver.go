package redfish

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// HardwareType is the Ironic hardware type this driver serves.
const HardwareType = "redfish"

// Version is the driver's own release.
const Version = "0.1.0"

// Driver is the redfish hardware type. It is safe for concurrent use; the
// zero value is not usable, call New.
type Driver struct {
	opts Options
	log  *slog.Logger
	pool *pool
}

// New returns a driver logging to log (nil: discard) with opts (start from
// DefaultOptions; zero durations and counts take the defaults).
func New(log *slog.Logger, opts Options) *Driver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts = opts.withDefaults()
	log = log.With("driver", HardwareType)
	return &Driver{opts: opts, log: log, pool: &pool{opts: opts, log: log, bmcs: map[bmcKey]*bmc{}}}
}

// Describe implements plugins.Driver.
func (d *Driver) Describe() plugins.Description {
	return plugins.Description{
		Name:          HardwareType,
		Version:       Version,
		HardwareTypes: []string{HardwareType},
		Capabilities:  []plugins.Capability{plugins.CapabilityVirtualMedia},
	}
}

// Close logs out of every BMC session the driver holds. Calls after Close
// log in again.
func (d *Driver) Close(ctx context.Context) error {
	d.pool.mu.Lock()
	bmcs := make([]*bmc, 0, len(d.pool.bmcs))
	for _, b := range d.pool.bmcs {
		bmcs = append(bmcs, b)
	}
	d.pool.mu.Unlock()
	for _, b := range bmcs {
		b.close(ctx)
	}
	return nil
}

// target is what an operation acts on: an authenticated client bound to
// the call's ctx, and the node's system path.
type target struct {
	c      *gofish.APIClient
	path   string
	ni     nodeInfo
	logger *slog.Logger
}

// system reads the node's system afresh, so its ETag and allowable values
// are current.
func (t target) system() (*schemas.ComputerSystem, error) {
	return schemas.GetComputerSystem(t.c, t.path)
}

// call runs fn against the node's BMC: it parses driver_info, asks the
// breaker, takes a request slot, logs in (or reuses the session) and turns
// any failure into an *Error naming the node, BMC and operation.
func (d *Driver) call(ctx context.Context, node plugins.Node, op string, fn func(t target) error) error {
	ni, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return fmt.Errorf("driver redfish: node %s: %s: %w", node.UUID, op, err)
	}
	b, err := d.pool.get(ni)
	if err != nil {
		return fmt.Errorf("driver redfish: node %s: %s: %w", node.UUID, op, err)
	}
	br := b.breaker(ni.systemPath())
	if why := br.allow(); why != nil {
		return &Error{Node: node.UUID, BMC: ni.address, Op: op,
			msg:  scrub("circuit breaker open: "+why.Error(), ni.secrets),
			kind: errors.Join(plugins.ErrBMCUnreachable, ErrBreakerOpen), retryable: true}
	}
	log := d.log.With("node", node.UUID, "bmc", ni.address, "op", op)
	err = b.run(ctx, ni, func(c *gofish.APIClient) error {
		path, err := b.systemPath(c, ni)
		if err != nil {
			return err
		}
		return fn(target{c: c, path: path, ni: ni, logger: log})
	})
	f := classify(ctx, err)
	if err == nil {
		br.done(f, "")
		return nil
	}
	e := newError(ni, node.UUID, op, f, err)
	br.done(f, e.msg)
	if br.open() {
		log.Warn("redfish BMC failing; circuit breaker open", "error", e.msg)
	} else {
		log.Debug("redfish call failed", "error", e.msg)
	}
	return e
}
