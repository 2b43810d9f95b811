package conductor

import (
	"context"
	"errors"
	"time"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
)

// agentVerifyCAKey is the driver_internal_info key holding the PEM
// certificate the agent sent as agent_verify_ca (Ironic keeps a path to a
// file there; Rivet keeps the certificate, which any conductor can then
// use).
const agentVerifyCAKey = "agent_verify_ca"

// errInvalidAgentToken is Ironic's answer to a heartbeat whose token is
// missing or wrong (InvalidParameterValue, 400).
func errInvalidAgentToken() *Error {
	return errInvalidParameter("Invalid or missing agent token received.")
}

// heartbeat is an agent heartbeat's arguments.
type heartbeat struct {
	url, agentVersion, digest string
	extra                     rpc.HeartbeatExtra
}

func heartbeatArgs(p rpc.Params) (hb heartbeat, err error) {
	for _, a := range [...]struct {
		name string
		dst  *string
	}{{"callback_url", &hb.url}, {"agent_version", &hb.agentVersion}, {"agent_token_sha256", &hb.digest},
		{"agent_verify_ca", &hb.extra.VerifyCA}, {"agent_status", &hb.extra.Status},
		{"agent_status_message", &hb.extra.StatusMessage}} {
		if *a.dst, err = p.String(a.name); err != nil {
			return hb, err
		}
	}
	return hb, nil
}

// agentHeartbeat records a ramdisk agent's heartbeat (API 1.22+ sends
// agent_version) in driver_internal_info and, for a node waiting in "wait
// call-back", resumes the deploy to active. Only a heartbeat whose
// agent_token_sha256 (RPC 1.4; the REST API sends the digest of the token
// the agent presented, never the token) matches the node's token, checked
// under the node's lease (or by a write conditioned on the lease's epoch
// as read with the token: heartbeatUnleased), changes anything; any other
// is refused with InvalidParameterValue (400), as Ironic refuses a missing
// or wrong token.
func (s *Service) agentHeartbeat(ctx context.Context, p rpc.Params) (any, error) {
	hb, err := heartbeatArgs(p)
	if err != nil {
		return nil, err
	}
	id, err := nodeID(p)
	if err != nil {
		return nil, err
	}
	if done, err := s.heartbeatUnleased(ctx, id, hb); done {
		return nil, err
	}
	t, err := s.tasks.Acquire(ctx, id, "heartbeat")
	if err != nil {
		return nil, err
	}
	n := t.Node
	if !agenttoken.ValidDigest(n.DriverInternalInfo, hb.digest) {
		t.Release(ctx)
		// The node's UUID and state only: never a token or digest.
		s.nodeLog(ctx, n).Warn("agent heartbeat refused: invalid or missing agent token", "provision_state", n.ProvisionState)
		return nil, errInvalidAgentToken()
	}
	recordHeartbeat(n, hb)
	s.logAgentStatus(ctx, n, hb)
	if n.ProvisionState == string(states.DeployWait) && !n.Maintenance && s.isDirect(n) {
		// The direct deploy continues in the background, under the
		// lease this heartbeat took: the agent is not kept waiting.
		return nil, s.startWork(ctx, t, func() error { return t.Save(ctx) }, s.continueDeploy)
	}
	if n.ProvisionState == string(states.CleanWait) && !n.Maintenance && s.isDirect(n) {
		return nil, s.startWork(ctx, t, func() error { return t.Save(ctx) }, s.continueClean)
	}
	if n.ProvisionState == string(states.RescueWait) && !n.Maintenance && s.usesAgentRescue(n) {
		return nil, s.startWork(ctx, t, func() error { return t.Save(ctx) }, s.finalizeAgentRescue)
	}
	return withLease(ctx, t, func() (any, error) {
		resumed := false
		if n.ProvisionState == string(states.DeployWait) && !n.Maintenance {
			if err := fire(n, states.Resume, "resume"); err != nil {
				return nil, err
			}
			if err := fire(n, states.Done, "done"); err != nil {
				return nil, err
			}
			s.deployed(n)
			resumed = true
		}
		if err := t.Save(ctx); err != nil {
			return nil, err
		}
		if resumed {
			s.nodeLog(ctx, n).Info("agent called back; deploy finished", "provision_state", n.ProvisionState)
		}
		return nil, nil
	})
}

// heartbeatUnleased handles the heartbeat of an agent a direct deploy or
// clean waits for: a deploy's steady state, one heartbeat after another
// until the command a step started ends. Ironic spends a worker and the
// node's lock on each, to ask the agent whether its command ended; with
// a worker per waiting node none was left for new requests, and a
// refused heartbeat (503 "no free worker") came back a moment later to
// be refused again. Here a heartbeat is one read and one conditional
// write (db.Store.SaveUnleased: a lease of no duration), the agent is
// answered, and the rest is followed up in the background (followUp):
// asking the agent about its command, then, once it ended, the deploy or
// clean goes on under the lease on a worker it waits for. It reports
// false, having changed nothing, for any other heartbeat and when the
// node was leased since it was read: those take the lease.
func (s *Service) heartbeatUnleased(ctx context.Context, id string, hb heartbeat) (bool, error) {
	n, epoch, err := s.store.GetNodeEpoch(ctx, id)
	switch {
	case errors.Is(err, db.ErrNotFound):
		return true, errNodeNotFound(id, err)
	case err != nil:
		return true, err
	case n.Reservation != nil || !agenttoken.ValidDigest(n.DriverInternalInfo, hb.digest):
		return false, nil // the lease path waits for the lease, or refuses the token under it
	}
	if _, ok := s.waitsForAgent(n); !ok {
		return false, nil
	}
	recordHeartbeat(n, hb)
	err = s.store.SaveUnleased(ctx, n, epoch)
	if errors.Is(err, db.ErrLeaseLost) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	s.logAgentStatus(ctx, n, hb)
	s.followUp(n)
	return true, nil
}

// recordHeartbeat notes the heartbeat in n's driver_internal_info: the
// agent's URL and version, the time, and the agent's certificate. A node
// waiting for its agent in wait call-back, clean wait or service wait has
// provision_updated_at touched (Ironic's touch_provisioning), so
// deploy_callback_timeout counts from the agent's last heartbeat: an image
// write longer than the timeout does not fail while its agent reports in.
func recordHeartbeat(n *objects.Node, hb heartbeat) {
	switch states.State(n.ProvisionState) {
	case states.DeployWait, states.CleanWait, states.ServiceWait:
		now := clock.Now()
		n.ProvisionUpdatedAt = &now
	}
	dii := cloneMap(n.DriverInternalInfo)
	dii["agent_url"] = hb.url
	dii["agent_last_heartbeat"] = clock.Now().Format(time.RFC3339)
	if hb.agentVersion != "" {
		dii["agent_version"] = hb.agentVersion
	}
	if hb.extra.VerifyCA != "" {
		// The agent's self-signed certificate (public): the agent
		// client verifies the agent's HTTPS with it.
		dii[agentVerifyCAKey] = hb.extra.VerifyCA
	}
	n.DriverInternalInfo = dii
}

// logAgentStatus logs the status an agent reported (API 1.72).
func (s *Service) logAgentStatus(ctx context.Context, n *objects.Node, hb heartbeat) {
	if hb.extra.Status != "" {
		s.nodeLog(ctx, n).Info("agent status", "agent_status", hb.extra.Status, "agent_status_message", hb.extra.StatusMessage)
	}
}

// getNodeWithToken issues a node's agent token (RPC 1.4, Ironic's
// get_node_with_token): under the node's lease, a node in a state that
// expects an agent and without a token gets a fresh one, saved in
// driver_internal_info, and the node is returned with it: the one time
// the token leaves the conductor, for the REST API's lookup answer. A
// node that has a token already is returned with it masked (lookup then
// gives "******", as Ironic: whoever looked up first holds it); a node in
// any other state is returned without a token.
func (s *Service) getNodeWithToken(ctx context.Context, p rpc.Params) (any, error) {
	t, err := s.acquireParam(ctx, p, "generate agent token")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		n := t.Node
		switch {
		case !states.ExpectsAgent(states.State(n.ProvisionState)):
			n.DriverInternalInfo = agenttoken.Wipe(n.DriverInternalInfo)
			return n, nil
		case agenttoken.Present(n.DriverInternalInfo):
			s.nodeLog(ctx, n).Warn("agent token requested again; the token issued before stays, lookup answers it masked",
				"provision_state", n.ProvisionState)
			dii := cloneMap(n.DriverInternalInfo)
			dii[agenttoken.Key] = agenttoken.Masked
			n.DriverInternalInfo = dii
			return n, nil
		}
		dii := cloneMap(n.DriverInternalInfo)
		dii[agenttoken.Key] = agenttoken.New()
		n.DriverInternalInfo = dii
		if err := t.Save(ctx); err != nil {
			return nil, err
		}
		s.nodeLog(ctx, n).Info("agent token issued", "provision_state", n.ProvisionState)
		return n, nil
	})
}
