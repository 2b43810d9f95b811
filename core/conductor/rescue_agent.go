package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/plugins"
)

// The agent rescue interface (Ironic's AgentRescue, rescue_interface
// "agent"): rescue powers the node off and boots the ironic-python-agent
// from the node's rescue image through the driver's ramdisk boot (as the
// direct deploy boots the agent: virtual media with driver_info
// rescue_iso, or network boot with rescue_kernel and rescue_ramdisk; the
// fake hardware type boots nothing); the node waits in "rescue wait" for
// the agent. On the agent's first heartbeat the conductor sends it
// rescue.finalize_rescue with the rescue password hashed as Ironic hashes
// it (SHA-crypt, instance_info hashed_rescue_password; the agent sets it
// for its "rescue" user and stops serving its API), and the node is in
// "rescue". Unrescue powers the node off, sets it to boot from its disk
// and powers it on: active again, the passwords removed from
// instance_info. The plain password never leaves the conductor: it is
// masked in every API answer, logged nowhere, and removed when the rescue
// fails or ends.

// AgentRescue is the name of the agent rescue interface.
const AgentRescue = "agent"

// driver_info keys naming the rescue image, as Ironic names them.
const (
	RescueISOKey     = "rescue_iso"
	RescueKernelKey  = "rescue_kernel"
	RescueRamdiskKey = "rescue_ramdisk"
	// hashedRescuePasswordKey is the instance_info key of the hashed
	// password the agent is given.
	hashedRescuePasswordKey = "hashed_rescue_password"
	// rescuePasswordHashAlgorithm is Ironic's default [conductor]
	// rescue_password_hash_algorithm.
	rescuePasswordHashAlgorithm = "sha256"
	cmdFinalizeRescue           = "rescue.finalize_rescue"
)

// agentRescue implements RescueInterface through the agent.
type agentRescue struct{ s *Service }

// rescueBootInfo is what the driver's ramdisk boot gets to boot the
// rescue agent, from driver_info rescue_iso or rescue_kernel and
// rescue_ramdisk.
func rescueBootInfo(n *objects.Node) (map[string]any, error) {
	out, ok := ramdiskBootInfo(n, RescueISOKey, RescueKernelKey, RescueRamdiskKey)
	if !ok {
		return nil, fmt.Errorf("Node %s is missing driver_info %s (virtual media) or %s and %s (network boot) to boot the rescue ramdisk",
			n.UUID, RescueISOKey, RescueKernelKey, RescueRamdiskKey)
	}
	return out, nil
}

// Validate checks that the rescue image is known.
func (r agentRescue) Validate(_ context.Context, n *objects.Node) error {
	_, err := rescueBootInfo(n)
	return err
}

// Rescue hashes the password into instance_info, powers the node off and
// boots the rescue agent: the node waits for its heartbeat.
func (r agentRescue) Rescue(ctx context.Context, t *Task) (states.Event, error) {
	n := t.Node
	pw, _ := n.InstanceInfo["rescue_password"].(string)
	if pw == "" {
		return "", errors.New("instance_info has no rescue_password")
	}
	hashed, err := hashRescuePassword(pw, rescuePasswordHashAlgorithm)
	if err != nil {
		return "", err
	}
	ii := cloneMap(n.InstanceInfo)
	ii[hashedRescuePasswordKey] = hashed
	n.InstanceInfo = ii
	dii := cloneMap(n.DriverInternalInfo)
	delete(dii, "agent_url") // the instance's agent, if any, is gone (Ironic's wipe_token_and_url)
	n.DriverInternalInfo = dii
	info, err := rescueBootInfo(n)
	if err != nil {
		return "", err
	}
	err = r.s.withHardware(ctx, t, "boot the rescue ramdisk", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		if err := hw.SetPowerState(ctx, pn, plugins.PowerOff); err != nil {
			return err
		}
		pn.InstanceInfo = info
		if err := hw.PrepareDeploy(ctx, pn); err != nil {
			return err
		}
		return hw.Deploy(ctx, pn)
	})
	if err != nil {
		return "", err
	}
	return states.Wait, nil
}

// Unrescue boots the node back into its instance: power off, boot from
// disk (persistently), power on.
func (r agentRescue) Unrescue(ctx context.Context, t *Task) error {
	return r.s.withHardware(ctx, t, "boot the instance", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		if err := hw.SetPowerState(ctx, pn, plugins.PowerOff); err != nil {
			return err
		}
		err := hw.SetBootDevice(ctx, pn, plugins.BootDeviceSetting{Device: plugins.BootDisk, Persistent: true})
		if err != nil && !errors.Is(err, plugins.ErrNotSupported) {
			return err
		}
		if err := hw.SetPowerState(ctx, pn, plugins.PowerOn); err != nil {
			return err
		}
		t.Node.PowerState = ptr(string(plugins.PowerOn))
		return nil
	})
}

// usesAgentRescue reports whether n's rescue interface is the agent's.
func (s *Service) usesAgentRescue(n *objects.Node) bool {
	r, err := s.rescuer(n)
	if err != nil {
		return false
	}
	_, ok := r.(agentRescue)
	return ok
}

// finalizeAgentRescue finishes a rescue after the rescue agent's
// heartbeat (background work under the heartbeat's lease): the agent is
// given the hashed password (rescue.finalize_rescue); the node is then in
// rescue. An agent that cannot take it fails the rescue, as Ironic's
// rescuing_error_handler, without the passwords.
func (s *Service) finalizeAgentRescue(ctx context.Context, t *Task) {
	n := t.Node
	hashed, _ := n.InstanceInfo[hashedRescuePasswordKey].(string)
	if hashed == "" {
		s.failRescue(ctx, t, errors.New("Agent rescue requires rescue_password in instance_info"))
		return
	}
	_, err := s.agent.Run(ctx, agentTarget(n), cmdFinalizeRescue, map[string]any{"rescue_password": hashed, "hashed": true})
	if err != nil {
		s.failRescue(ctx, t, fmt.Errorf("Agent failed to finalize rescue of node %s: %w", n.UUID, err))
		return
	}
	if err := fire(n, states.Resume, "resume"); err != nil {
		s.failRescue(ctx, t, err)
		return
	}
	dii := cloneMap(n.DriverInternalInfo)
	delete(dii, "agent_url") // the agent stops serving its API once rescued
	n.DriverInternalInfo = dii
	s.finish(ctx, t, states.Done, nil)
}

// failRescue fails a rescue and removes the passwords.
func (s *Service) failRescue(ctx context.Context, t *Task, err error) {
	dropKeys(t.Node, rescuePasswordKeys)
	s.fail(ctx, t, err)
}
