package plugins

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// consoleServer serves protocol 2's Console service (console interface
// version 1). Every error leaves through toStatus.
type consoleServer struct {
	driverv2.UnimplementedConsoleServer
	driver Driver
	info   Info
}

func (s *consoleServer) console(op string) (ConsoleInterface, error) {
	return capability[ConsoleInterface](&server{driver: s.driver, info: s.info}, op)
}

func (s *consoleServer) StartConsole(ctx context.Context, req *driverv2.StartConsoleRequest) (*driverv2.ConsoleInfo, error) {
	d, err := s.console("start console")
	if err != nil {
		return nil, toStatus(err)
	}
	if req.GetPort() < 0 || req.GetPort() > 65535 {
		return nil, toStatus(fmt.Errorf("plugin %s: start console: port %d out of range: %w", s.info.Name, req.GetPort(), ErrNotSupported))
	}
	info, err := d.StartConsole(ctx, nodeFromProto(req.GetNode()), ConsoleEndpoint{Address: req.GetAddress(), Port: int(req.GetPort())})
	if err != nil {
		return nil, toStatus(err)
	}
	if err := info.Validate(); err != nil {
		return nil, toStatus(fmt.Errorf("plugin %s: start console: %w", s.info.Name, err))
	}
	return &driverv2.ConsoleInfo{Type: info.Type, Url: info.URL}, nil
}

func (s *consoleServer) StopConsole(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := s.console("stop console")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.StopConsole(ctx, nodeFromProto(req.GetNode())))
}
