package plugins

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// biosServer serves protocol 2's BIOS service (bios interface version 1).
// Every error leaves through toStatus.
type biosServer struct {
	driverv2.UnimplementedBIOSServer
	s *server
}

func (b *biosServer) GetBIOSSettings(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.BIOSSettingsResponse, error) {
	d, err := capability[BIOSInterface](b.s, "get BIOS settings")
	if err != nil {
		return nil, toStatus(err)
	}
	settings, err := d.GetBIOSSettings(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	out := &driverv2.BIOSSettingsResponse{Settings: make([]*driverv2.BIOSSetting, 0, len(settings))}
	for _, st := range settings {
		if st.Name == "" {
			return nil, toStatus(fmt.Errorf("plugin %s: get BIOS settings: a setting without a name", b.s.info.Name))
		}
		out.Settings = append(out.Settings, biosSettingToProto(st))
	}
	return out, nil
}

func (b *biosServer) ApplyBIOSSettings(ctx context.Context, req *driverv2.ApplyBIOSSettingsRequest) (*driverv1.Empty, error) {
	d, err := capability[BIOSInterface](b.s, "apply BIOS settings")
	if err != nil {
		return nil, toStatus(err)
	}
	settings := make([]BIOSSettingValue, 0, len(req.GetSettings()))
	for _, st := range req.GetSettings() {
		settings = append(settings, BIOSSettingValue{Name: st.GetName(), Value: st.GetValue()})
	}
	return empty(d.ApplyBIOSSettings(ctx, nodeFromProto(req.GetNode()), settings))
}

func (b *biosServer) FactoryResetBIOS(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := capability[BIOSInterface](b.s, "factory reset BIOS")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.FactoryResetBIOS(ctx, nodeFromProto(req.GetNode())))
}

// firmwareServer serves protocol 2's Firmware service (firmware interface
// version 1).
type firmwareServer struct {
	driverv2.UnimplementedFirmwareServer
	s *server
}

func (f *firmwareServer) ListFirmwareComponents(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.FirmwareComponentsResponse, error) {
	d, err := capability[FirmwareInterface](f.s, "list firmware components")
	if err != nil {
		return nil, toStatus(err)
	}
	comps, err := d.ListFirmwareComponents(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	out := &driverv2.FirmwareComponentsResponse{}
	for _, c := range comps {
		out.Components = append(out.Components, &driverv2.FirmwareComponent{Component: c.Component, CurrentVersion: c.CurrentVersion})
	}
	return out, nil
}

func (f *firmwareServer) UpdateFirmware(ctx context.Context, req *driverv2.UpdateFirmwareRequest) (*driverv1.Empty, error) {
	d, err := capability[FirmwareInterface](f.s, "update firmware")
	if err != nil {
		return nil, toStatus(err)
	}
	updates := make([]FirmwareUpdate, 0, len(req.GetUpdates()))
	for _, u := range req.GetUpdates() {
		updates = append(updates, FirmwareUpdate{Component: u.GetComponent(), URL: u.GetUrl(), Wait: u.GetWait().AsDuration()})
	}
	return empty(d.UpdateFirmware(ctx, nodeFromProto(req.GetNode()), updates))
}
