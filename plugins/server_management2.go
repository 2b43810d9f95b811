package plugins

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// management2Server serves the Management2 service (management interface
// version 2) for a driver implementing ManagementInterfaceV2; for any other
// driver every call is ErrNotSupported. Every error leaves through
// toStatus, and every value from the wire is validated before the driver
// sees it.
type management2Server struct {
	driverv2.UnimplementedManagement2Server
	driver Driver
	info   Info
}

func (s *management2Server) impl(method string) (ManagementInterfaceV2, error) {
	return capability[ManagementInterfaceV2](&server{driver: s.driver, info: s.info}, method+" (management interface version 2)")
}

func (s *management2Server) invalid(what string, err error) error {
	return toStatus(fmt.Errorf("plugin %s: %s: %v: %w", s.info.Name, what, err, ErrNotSupported))
}

func (s *management2Server) GetBootMode(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.BootModeResponse, error) {
	d, err := s.impl("get boot mode")
	if err != nil {
		return nil, toStatus(err)
	}
	m, err := d.GetBootMode(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	if _, perr := ParseBootMode(string(m)); perr != nil {
		return nil, s.invalid("get boot mode", perr)
	}
	return &driverv2.BootModeResponse{BootMode: string(m)}, nil
}

func (s *management2Server) SetBootMode(ctx context.Context, req *driverv2.SetBootModeRequest) (*driverv1.Empty, error) {
	d, err := s.impl("set boot mode")
	if err != nil {
		return nil, toStatus(err)
	}
	m, err := ParseTargetBootMode(req.GetBootMode())
	if err != nil {
		return nil, s.invalid("set boot mode", err)
	}
	return empty(d.SetBootMode(ctx, nodeFromProto(req.GetNode()), m))
}

func (s *management2Server) GetSecureBoot(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.SecureBootResponse, error) {
	d, err := s.impl("get secure boot")
	if err != nil {
		return nil, toStatus(err)
	}
	on, err := d.GetSecureBoot(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &driverv2.SecureBootResponse{Enabled: on}, nil
}

func (s *management2Server) SetSecureBoot(ctx context.Context, req *driverv2.SetSecureBootRequest) (*driverv1.Empty, error) {
	d, err := s.impl("set secure boot")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.SetSecureBoot(ctx, nodeFromProto(req.GetNode()), req.GetEnabled()))
}

func (s *management2Server) SupportedIndicators(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.IndicatorsResponse, error) {
	d, err := s.impl("supported indicators")
	if err != nil {
		return nil, toStatus(err)
	}
	inds, err := d.SupportedIndicators(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	out := &driverv2.IndicatorsResponse{}
	for _, in := range inds {
		p := &driverv2.Indicator{Component: in.Component, Name: in.Name, Readonly: in.Readonly}
		for _, st := range in.States {
			p.States = append(p.States, string(st))
		}
		out.Indicators = append(out.Indicators, p)
	}
	return out, nil
}

func (s *management2Server) GetIndicatorState(ctx context.Context, req *driverv2.IndicatorRequest) (*driverv2.IndicatorStateResponse, error) {
	d, err := s.impl("get indicator state")
	if err != nil {
		return nil, toStatus(err)
	}
	st, err := d.GetIndicatorState(ctx, nodeFromProto(req.GetNode()), req.GetComponent(), req.GetName())
	if err != nil {
		return nil, toStatus(err)
	}
	if _, perr := ParseIndicatorState(string(st)); perr != nil {
		return nil, s.invalid("get indicator state", perr)
	}
	return &driverv2.IndicatorStateResponse{State: string(st)}, nil
}

func (s *management2Server) SetIndicatorState(ctx context.Context, req *driverv2.SetIndicatorStateRequest) (*driverv1.Empty, error) {
	d, err := s.impl("set indicator state")
	if err != nil {
		return nil, toStatus(err)
	}
	st, err := ParseTargetIndicatorState(req.GetState())
	if err != nil {
		return nil, s.invalid("set indicator state", err)
	}
	return empty(d.SetIndicatorState(ctx, nodeFromProto(req.GetNode()), req.GetComponent(), req.GetName(), st))
}

func (s *management2Server) GetVirtualMedia(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.VirtualMediaResponse, error) {
	d, err := s.impl("get virtual media")
	if err != nil {
		return nil, toStatus(err)
	}
	media, err := d.GetVirtualMedia(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	out := &driverv2.VirtualMediaResponse{}
	for _, m := range media {
		out.Media = append(out.Media, &driverv2.VirtualMedia{DeviceType: string(m.Device), MediaTypes: m.MediaTypes, Inserted: m.Inserted, Image: m.Image})
	}
	return out, nil
}

func (s *management2Server) AttachVirtualMedia(ctx context.Context, req *driverv2.AttachVirtualMediaRequest) (*driverv1.Empty, error) {
	d, err := s.impl("attach virtual media")
	if err != nil {
		return nil, toStatus(err)
	}
	dev, err := ParseVirtualMediaDevice(req.GetDeviceType())
	if err != nil {
		return nil, s.invalid("attach virtual media", err)
	}
	if req.GetImageUrl() == "" {
		return nil, s.invalid("attach virtual media", fmt.Errorf("no image URL"))
	}
	return empty(d.AttachVirtualMedia(ctx, nodeFromProto(req.GetNode()), dev, req.GetImageUrl()))
}

func (s *management2Server) DetachVirtualMedia(ctx context.Context, req *driverv2.DetachVirtualMediaRequest) (*driverv1.Empty, error) {
	d, err := s.impl("detach virtual media")
	if err != nil {
		return nil, toStatus(err)
	}
	var devs []VirtualMediaDevice
	for _, t := range req.GetDeviceTypes() {
		dev, err := ParseVirtualMediaDevice(t)
		if err != nil {
			return nil, s.invalid("detach virtual media", err)
		}
		devs = append(devs, dev)
	}
	return empty(d.DetachVirtualMedia(ctx, nodeFromProto(req.GetNode()), devs))
}
