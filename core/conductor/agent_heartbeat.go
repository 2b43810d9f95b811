package conductor

import (
	"context"
	"time"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
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

// agentHeartbeat records a ramdisk agent's heartbeat (API 1.22+ sends
// agent_version) in driver_internal_info and, for a node waiting in "wait
// call-back", resumes the deploy to active. Only a heartbeat whose
// agent_token_sha256 (RPC 1.4; the REST API sends the digest of the token
// the agent presented, never the token) matches the node's token, checked
// under the node's lease, changes anything; any other is refused with
// InvalidParameterValue (400), as Ironic refuses a missing or wrong token.
func (s *Service) agentHeartbeat(ctx context.Context, p rpc.Params) (any, error) {
	url, err := p.String("callback_url")
	if err != nil {
		return nil, err
	}
	agentVersion, err := p.String("agent_version")
	if err != nil {
		return nil, err
	}
	digest, err := p.String("agent_token_sha256")
	if err != nil {
		return nil, err
	}
	var extra rpc.HeartbeatExtra
	for k, dst := range map[string]*string{"agent_verify_ca": &extra.VerifyCA, "agent_status": &extra.Status, "agent_status_message": &extra.StatusMessage} {
		if *dst, err = p.String(k); err != nil {
			return nil, err
		}
	}
	t, err := s.acquireParam(ctx, p, "heartbeat")
	if err != nil {
		return nil, err
	}
	n := t.Node
	if !agenttoken.ValidDigest(n.DriverInternalInfo, digest) {
		t.Release(ctx)
		// The node's UUID and state only: never a token or digest.
		s.nodeLog(ctx, n).Warn("agent heartbeat refused: invalid or missing agent token", "provision_state", n.ProvisionState)
		return nil, errInvalidAgentToken()
	}
	dii := cloneMap(n.DriverInternalInfo)
	dii["agent_url"] = url
	dii["agent_last_heartbeat"] = clock.Now().Format(time.RFC3339)
	if agentVersion != "" {
		dii["agent_version"] = agentVersion
	}
	if extra.VerifyCA != "" {
		// The agent's self-signed certificate (public): the agent
		// client verifies the agent's HTTPS with it.
		dii[agentVerifyCAKey] = extra.VerifyCA
	}
	if extra.Status != "" {
		s.nodeLog(ctx, n).Info("agent status", "agent_status", extra.Status, "agent_status_message", extra.StatusMessage)
	}
	n.DriverInternalInfo = dii
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
