package plugins

import (
	"fmt"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// Conversions of the plugin side between the hand-written types and the
// generated protocol types: requests in, answers out. The host's are in
// plugins/host (convert.go).

func nodeFromProto(p *driverv1.Node) Node {
	if p == nil {
		return Node{}
	}
	return Node{
		UUID:         p.GetUuid(),
		Name:         p.GetName(),
		HardwareType: p.GetHardwareType(),
		DriverInfo:   DriverInfo(p.GetDriverInfo().AsMap()),
		InstanceInfo: p.GetInstanceInfo().AsMap(),
	}
}

func infoToProto(i Info) *driverv1.InfoResponse {
	p := &driverv1.InfoResponse{
		Name:             i.Name,
		Version:          i.Version,
		HardwareTypes:    i.HardwareTypes,
		Interfaces:       map[string]*driverv1.InterfaceVersions{},
		ProtocolVersions: toInt32s(i.ProtocolVersions),
	}
	for iface, vs := range i.Interfaces {
		p.Interfaces[string(iface)] = &driverv1.InterfaceVersions{Versions: toInt32s(vs)}
	}
	for _, c := range i.Capabilities {
		p.Capabilities = append(p.Capabilities, string(c))
	}
	return p
}

func negotiationFromProto(p *driverv1.ConfigureRequest) Negotiation {
	n := Negotiation{Protocol: int(p.GetProtocolVersion()), Interfaces: map[Interface]int{}, HostVersion: p.GetHostVersion()}
	for iface, v := range p.GetInterfaces() {
		n.Interfaces[Interface(iface)] = int(v)
	}
	return n
}

func cleanStepToProto(s CleanStep) (*driverv1.CleanStep, error) {
	args, err := wire.MapToStruct(s.Args)
	if err != nil {
		return nil, fmt.Errorf("clean step %s: args: %w", s.Step, err)
	}
	phases := make([]string, len(s.Phases))
	for i, ph := range s.Phases {
		phases[i] = string(ph)
	}
	return &driverv1.CleanStep{Interface: string(s.Interface), Step: s.Step, Priority: int32(s.Priority), Abortable: s.Abortable, Args: args,
		Phases: phases}, nil
}

func cleanStepFromProto(p *driverv1.CleanStep) CleanStep {
	return CleanStep{
		Interface: Interface(p.GetInterface()),
		Step:      p.GetStep(),
		Priority:  int(p.GetPriority()),
		Abortable: p.GetAbortable(),
		Args:      p.GetArgs().AsMap(),
		Phases:    stepPhases(p.GetPhases()),
	}
}

// stepPhases converts the wire's phases; none stays nil (clean only).
func stepPhases(in []string) []StepPhase {
	if len(in) == 0 {
		return nil
	}
	out := make([]StepPhase, len(in))
	for i, ph := range in {
		out[i] = StepPhase(ph)
	}
	return out
}

func inventoryToProto(inv Inventory) *driverv1.InspectResponse {
	p := &driverv1.InspectResponse{Cpus: int32(inv.CPUs), CpuArch: inv.CPUArch, MemoryMb: inv.MemoryMB, LocalGb: inv.LocalGB}
	for _, n := range inv.NICs {
		p.Nics = append(p.Nics, &driverv1.NIC{Name: n.Name, MacAddress: n.MACAddress})
	}
	return p
}

func toInt32s(vs []int) []int32 {
	out := make([]int32, len(vs))
	for i, v := range vs {
		out[i] = int32(v)
	}
	return out
}
