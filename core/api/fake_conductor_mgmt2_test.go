package api

import (
	"context"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// The fake conductor answers the management interface version 2 methods as
// for a driver without them (Ironic's UnsupportedDriverExtension, 400);
// their behaviour is tested through a real conductor (management2_test.go).

func (f *fakeConductor) mgmt2Unsupported(n *objects.Node, what string) error {
	f.record(what)
	return &rpc.RemoteError{Class: "UnsupportedDriverExtension", Code: http.StatusBadRequest,
		Message: "Driver " + n.Driver + " does not support " + what + " (disabled or not implemented)."}
}

func (f *fakeConductor) ChangeNodeBootMode(_ context.Context, n *objects.Node, _ string) error {
	return f.mgmt2Unsupported(n, "boot_mode")
}

func (f *fakeConductor) ChangeNodeSecureBoot(_ context.Context, n *objects.Node, _ bool) error {
	return f.mgmt2Unsupported(n, "secure_boot")
}

func (f *fakeConductor) GetSupportedIndicators(_ context.Context, n *objects.Node) (map[string]map[string]rpc.IndicatorInfo, error) {
	return nil, f.mgmt2Unsupported(n, "indicators")
}

func (f *fakeConductor) GetIndicatorState(_ context.Context, n *objects.Node, _, _ string) (string, error) {
	return "", f.mgmt2Unsupported(n, "indicators")
}

func (f *fakeConductor) SetIndicatorState(_ context.Context, n *objects.Node, _, _, _ string) error {
	return f.mgmt2Unsupported(n, "indicators")
}

func (f *fakeConductor) GetVirtualMedia(_ context.Context, n *objects.Node) ([]rpc.VirtualMedia, error) {
	return nil, f.mgmt2Unsupported(n, "virtual media")
}

func (f *fakeConductor) AttachVirtualMedia(_ context.Context, n *objects.Node, _, _, _ string) error {
	return f.mgmt2Unsupported(n, "virtual media")
}

func (f *fakeConductor) DetachVirtualMedia(_ context.Context, n *objects.Node, _ []string) error {
	return f.mgmt2Unsupported(n, "virtual media")
}
