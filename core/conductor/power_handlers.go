package conductor

import (
	"context"
	"fmt"
	"time"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// changeNodePowerState checks that the node's driver can perform the
// action (InvalidParameterValue otherwise, before anything changes), sets
// target_power_state to the action's final state (Ironic's: "power on" for
// both reboots, "power off" for both power offs) and runs the action in the
// background; the reached state or last_error is recorded. A soft action
// without a timeout (RPC 1.1) waits Config.SoftPowerOffTimeout, Ironic's
// [conductor] soft_power_off_timeout; a hard one the driver's own wait.
func (s *Service) changeNodePowerState(ctx context.Context, p rpc.Params) (any, error) {
	state, err := p.String("new_state")
	if err != nil {
		return nil, err
	}
	target := plugins.PowerState(state)
	if !target.Valid() || target.Final() == "" {
		id, _ := p.String("node_id")
		return nil, errInvalidParameter("The requested action \"%s\" can not be performed on node \"%s\".", state, id)
	}
	var seconds int
	if err := p.Decode("timeout", &seconds); err != nil {
		return nil, err
	}
	if p.Has("timeout") && seconds < 1 {
		return nil, errInvalidParameter("timeout has to be positive integer")
	}
	wait := time.Duration(seconds) * time.Second
	if target.Soft() && wait == 0 {
		wait = s.cfg.SoftPowerOffTimeout
	}
	t, err := s.acquireParam(ctx, p, "changing node power state")
	if err != nil {
		return nil, err
	}
	hw, err := s.hardware(t.Node)
	if err != nil {
		t.Release(ctx)
		return nil, err
	}
	actor := powerActor(hw)
	if err := actor.CheckPowerAction(target, wait); err != nil {
		t.Release(ctx)
		return nil, errPowerUnsupported(t.Node.Driver, target, seconds > 0, err)
	}
	final := target.Final()
	if final == plugins.PowerOff && t.Node.DisablePowerOff {
		t.Release(ctx)
		return nil, errPowerOffDisabled(state)
	}
	prepare := func() error {
		t.Node.TargetPowerState = ptr(string(final))
		t.Node.LastError = nil
		if target != plugins.PowerOn {
			// Whatever agent runs on the node does not survive a power
			// off or a reboot: its token must not outlive it (Ironic's
			// wipe_internal_info_on_power_off).
			t.Node.DriverInternalInfo = agenttoken.Wipe(t.Node.DriverInternalInfo)
		}
		return t.Save(ctx)
	}
	op := "set power state to " + string(target)
	if seconds > 0 {
		op += fmt.Sprintf(" within %ds", seconds)
	}
	work := func(ctx context.Context, t *Task) {
		n := t.Node
		call := func(ctx context.Context, pn plugins.Node) error {
			return actor.PowerAction(ctx, pn, target, wait)
		}
		err := s.driverCallWithin(ctx, n, op, wait, call)
		log := t.log
		if crashed(err) && ctx.Err() == nil && safeToRepeat(target) {
			// Hard power on/off: sending it again is harmless (crash_retry.go).
			log.Warn("driver plugin crashed during the power action; repeating it once on the restarted plugin",
				"target", string(target), "error", err)
			if err = s.driverCallWithin(ctx, n, op, wait, call); err != nil {
				err = fmt.Errorf("%w (repeated once after the driver plugin crashed)", err)
			}
		}
		if crashed(err) && ctx.Err() == nil {
			// Not safe to repeat, or crashed again: record what the BMC says.
			state, msg := s.powerAfterCrash(ctx, n, hw, op, target, err)
			n.TargetPowerState = nil
			if state != "" {
				n.PowerState = ptr(string(state))
			}
			n.LastError = ptr(msg)
			log.Warn("driver plugin crashed during the power action; not repeated, power state read back",
				"target", string(target), "power_state", string(state), "error", err)
			if serr := t.Save(ctx); serr != nil {
				log.Error("recording the power action failed", "error", serr)
			}
			return
		}
		n.TargetPowerState = nil
		if err != nil {
			n.LastError = ptr(err.Error())
			log.Warn("power action failed", "target", string(target), "timeout", wait, "error", err)
		} else {
			n.PowerState = ptr(string(final))
			log.Info("power state changed", "power_state", string(final), "by", string(target))
		}
		if serr := t.Save(ctx); serr != nil {
			log.Error("recording the power action failed", "error", serr)
		}
	}
	return nil, s.startWork(ctx, t, prepare, work)
}

// powerActor is how the conductor performs power actions on hw: a plugin's
// handle checks what was negotiated with the plugin, an in-process driver
// what it implements.
func powerActor(hw Hardware) host.PowerActor {
	if a, ok := hw.(host.PowerActor); ok {
		return a
	}
	return host.LocalPowerActor(hw)
}

// sharedNode loads the node named by node_id without a lease, with its
// driver.
func (s *Service) sharedNode(ctx context.Context, p rpc.Params) (*objects.Node, Hardware, error) {
	n, err := s.sharedByParam(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	hw, err := s.hardware(n)
	return n, hw, err
}

// driverRead runs a repeatable driver read on n (what names it in errors
// and logs) and returns what it read.
func driverRead[T any](ctx context.Context, s *Service, n *objects.Node, what string,
	read func(ctx context.Context, pn plugins.Node) (T, error)) (T, error) {
	var out T
	err := s.driverCallRepeatable(ctx, n, what, func(ctx context.Context, pn plugins.Node) (err error) {
		out, err = read(ctx, pn)
		return err
	})
	return out, err
}

// sharedByParam loads the node p's node_id names, without a lease.
func (s *Service) sharedByParam(ctx context.Context, p rpc.Params) (*objects.Node, error) {
	id, err := nodeID(p)
	if err != nil {
		return nil, err
	}
	return s.tasks.Shared(ctx, id)
}

// getBootDevice reads the boot device; a read takes no lease.
func (s *Service) getBootDevice(ctx context.Context, p rpc.Params) (any, error) {
	n, hw, err := s.sharedNode(ctx, p)
	if err != nil {
		return nil, err
	}
	bd, err := driverRead(ctx, s, n, "get boot device", func(ctx context.Context, pn plugins.Node) (plugins.BootDeviceSetting, error) {
		return hw.GetBootDevice(ctx, pn)
	})
	if err != nil {
		return nil, err
	}
	if bd.Device == "" { // the BMC reports no override: Ironic's nulls
		return rpc.BootDevice{}, nil
	}
	dev := string(bd.Device)
	return rpc.BootDevice{BootDevice: &dev, Persistent: &bd.Persistent}, nil
}

// setBootDevice sets the boot device under the node's lease.
func (s *Service) setBootDevice(ctx context.Context, p rpc.Params) (any, error) {
	device, err := p.String("device")
	if err != nil {
		return nil, err
	}
	var persistent bool
	if err := p.Decode("persistent", &persistent); err != nil {
		return nil, err
	}
	dev, perr := plugins.ParseBootDevice(device)
	if perr != nil {
		return nil, errInvalidParameter("Invalid boot device %s specified.", device)
	}
	return s.leasedCall(ctx, p, "setting boot device", func(t *Task, hw Hardware) error {
		return s.driverCallRepeatable(ctx, t.Node, "set boot device to "+device, func(ctx context.Context, pn plugins.Node) error {
			return hw.SetBootDevice(ctx, pn, plugins.BootDeviceSetting{Device: dev, Persistent: persistent, Mode: BootModeOf(t.Node)})
		})
	})
}

// leasedCall takes the lease of the node p names (for purpose) and runs
// call with its hardware synchronously, answering nil or call's error.
func (s *Service) leasedCall(ctx context.Context, p rpc.Params, purpose string, call func(t *Task, hw Hardware) error) (any, error) {
	t, err := s.acquireParam(ctx, p, purpose)
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		hw, err := s.hardware(t.Node)
		if err != nil {
			return nil, err
		}
		return nil, call(t, hw)
	})
}

// getSupportedBootDevices lists the boot devices; no lease.
func (s *Service) getSupportedBootDevices(ctx context.Context, p rpc.Params) (any, error) {
	n, hw, err := s.sharedNode(ctx, p)
	if err != nil {
		return nil, err
	}
	devs, err := driverRead(ctx, s, n, "list supported boot devices", func(ctx context.Context, pn plugins.Node) ([]plugins.BootDevice, error) {
		return hw.SupportedBootDevices(ctx, pn)
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = string(d)
	}
	return out, nil
}

// injectNMI sends a non-maskable interrupt under the node's lease (RPC
// 1.3). A driver without the nmi capability is Ironic's
// UnsupportedDriverExtension for inject_nmi (400); a BMC that refuses is a
// driver error naming it.
func (s *Service) injectNMI(ctx context.Context, p rpc.Params) (any, error) {
	t, err := s.acquireParam(ctx, p, "inject nmi")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		hw, err := s.hardware(t.Node)
		if err != nil {
			return nil, err
		}
		nmi, ok := nmiInjector(hw)
		if !ok {
			return nil, errUnsupported(t.Node.Driver, "inject_nmi")
		}
		err = s.driverCall(ctx, t.Node, "inject NMI", func(ctx context.Context, pn plugins.Node) error {
			return nmi.InjectNMI(ctx, pn)
		})
		if err == nil {
			s.nodeLog(ctx, t.Node).Info("NMI injected")
		}
		return nil, err
	})
}

// nmiInjector returns hw's NMI support: an in-process driver has it when it
// implements plugins.NMIInjector, a plugin when it also advertised
// plugins.CapabilityNMI (a plugin not running yet is asked, and answers
// ErrNotSupported itself if it lacks the capability).
func nmiInjector(hw Hardware) (plugins.NMIInjector, bool) {
	nmi, ok := hw.(plugins.NMIInjector)
	if !ok {
		return nil, false
	}
	if r, ok := hw.(interface {
		Registration() (host.Registration, bool)
	}); ok {
		if reg, running := r.Registration(); running && !reg.Has(plugins.CapabilityNMI) {
			return nil, false
		}
	}
	return nmi, true
}
