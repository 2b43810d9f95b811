package ipmi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/bougou/go-ipmi/pkg/client"

	"github.com/rivetmetal/rivet/plugins"
)

// HardwareType is the Ironic hardware type this driver serves.
const HardwareType = "ipmi"

// Version is the ipmi driver's own release.
const Version = "0.1.0"

// Driver is the ipmi hardware type. It is safe for concurrent use; the zero
// value is not usable, call New.
type Driver struct {
	log  *slog.Logger
	opts Options
	pool *pool
	dial dialer // nil: a UDP socket per session; tests only

	consoles consoles
}

// New returns an ipmi driver logging to log (nil: discard) with opts as
// defaults for what driver_info does not set. Call Close when done: it ends
// the BMC sessions the driver keeps open.
func New(log *slog.Logger, opts Options) *Driver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts = opts.withDefaults()
	log = log.With("driver", HardwareType)
	return &Driver{log: log, opts: opts, pool: newPool(log, opts.SessionIdleTimeout)}
}

// Describe implements plugins.Driver. The SDK derives power interface
// version 2 and soft_power from SetPowerStateWithin, RebootWithin,
// SoftPowerOff and SoftReboot.
func (d *Driver) Describe() plugins.Description {
	return plugins.Description{Name: HardwareType, Version: Version, HardwareTypes: []string{HardwareType}}
}

// Close ends every BMC session (Close Session is sent when ctx allows) and
// stops go-ipmi's keepalive goroutines. Calls after Close fail with
// ErrClosed.
func (d *Driver) Close(ctx context.Context) error {
	d.stopConsoles()
	return d.pool.close(ctx)
}

// do parses node's driver_info and runs one command against its BMC.
func (d *Driver) do(ctx context.Context, node plugins.Node, op string, fn func(context.Context, *client.Client) error) (params, error) {
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return params{}, fmt.Errorf("ipmi: %s: %w", op, err)
	}
	return p, d.exchange(ctx, p, op, fn)
}

// exchange runs fn on the BMC's session, opening it when there is none,
// when the credentials changed, or when it sat idle past the idle timeout.
// A reused session that does not answer is reopened and fn retried once:
// that is how a BMC restart or its idle timeout shows. The error is
// classified and names the BMC and op.
func (d *Driver) exchange(ctx context.Context, p params, op string, fn func(context.Context, *client.Client) error) error {
	s, err := d.pool.get(p.addr())
	if err != nil {
		return classify(ctx, p, op, err)
	}
	if err := s.lock(ctx); err != nil {
		return classify(ctx, p, op, fmt.Errorf("waiting for the BMC's previous command: %w", err))
	}
	defer s.unlock()
	err = d.run(ctx, s, p, op, fn)
	if d.pool.isClosed() { // Close gave up waiting for this call: end the session here
		s.drop(false)
	}
	return classify(ctx, p, op, err)
}

// run is exchange's body, with s held.
func (d *Driver) run(ctx context.Context, s *session, p params, op string, fn func(context.Context, *client.Client) error) error {
	fresh := false
	if s.client != nil && (s.creds != p.credentials() || s.idleFor() > d.opts.SessionIdleTimeout) {
		s.drop(true)
	}
	if s.client == nil {
		if err := s.connect(ctx, p, d.dial); err != nil {
			return err
		}
		fresh = true
		d.log.Debug("ipmi session opened", "bmc", p.addr(), "user", p.user)
	}
	err := s.run(ctx, p, fn)
	if errors.Is(err, ErrMalformedAnswer) {
		s.drop(false) // go-ipmi's state after its panic is unknown
		return err
	}
	if err == nil || !isSilence(err) || ctx.Err() != nil {
		return err
	}
	s.drop(false) // a session that went silent is not trusted again
	if fresh {
		return err
	}
	d.log.Info("ipmi session lost; reopening it and retrying once", "bmc", p.addr(), "op", op,
		"error", scrub(err, p.password).Error())
	if err := s.connect(ctx, p, d.dial); err != nil {
		return err
	}
	if err = s.run(ctx, p, fn); err != nil && (isSilence(err) || errors.Is(err, ErrMalformedAnswer)) {
		s.drop(false)
	}
	return err
}
