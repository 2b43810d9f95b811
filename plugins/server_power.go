package plugins

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// powerServer serves protocol 2's Power service (power interface version
// 2) over localPower. Every error leaves through toStatus.
type powerServer struct {
	driverv2.UnimplementedPowerServer
	driver Driver
	info   Info
}

func (s *powerServer) PowerAction(ctx context.Context, req *driverv2.PowerActionRequest) (*driverv1.Empty, error) {
	d, err := capability[PowerInterface](&server{driver: s.driver, info: s.info}, "power action")
	if err != nil {
		return nil, toStatus(err)
	}
	target, err := ParsePowerState(req.GetAction())
	if err != nil || target.Final() == "" {
		return nil, toStatus(fmt.Errorf("plugin %s: power action %q: %w", s.info.Name, req.GetAction(), ErrNotSupported))
	}
	timeout := req.GetTimeout().AsDuration()
	if timeout < 0 {
		return nil, toStatus(fmt.Errorf("plugin %s: %s: negative timeout %v: %w", s.info.Name, target, timeout, ErrNotSupported))
	}
	a := localPower{d}
	if err := a.CheckPowerAction(target, timeout); err != nil {
		return nil, toStatus(fmt.Errorf("plugin %s: %w", s.info.Name, err))
	}
	return empty(a.PowerAction(ctx, nodeFromProto(req.GetNode()), target, timeout))
}
