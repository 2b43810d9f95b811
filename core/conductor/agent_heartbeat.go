package conductor

import (
	"context"
	"time"

	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
)

// agentHeartbeat records a ramdisk agent's heartbeat (API 1.22+ sends
// agent_version) in driver_internal_info and, for a node waiting in "wait
// call-back", resumes the deploy to active.
func (s *Service) agentHeartbeat(ctx context.Context, p rpc.Params) (any, error) {
	url, err := p.String("callback_url")
	if err != nil {
		return nil, err
	}
	agentVersion, err := p.String("agent_version")
	if err != nil {
		return nil, err
	}
	t, err := s.acquireParam(ctx, p, "heartbeat")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		n := t.Node
		dii := cloneMap(n.DriverInternalInfo)
		dii["agent_url"] = url
		dii["agent_last_heartbeat"] = clock.Now().Format(time.RFC3339)
		if agentVersion != "" {
			dii["agent_version"] = agentVersion
		}
		n.DriverInternalInfo = dii
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
