package host

import (
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// Conversions of the client side between the SDK's types and the generated
// protocol types: requests out, answers in. The plugin side's are in package
// plugins (convert.go). Enumerations are validated when they arrive.

func nodeToProto(n plugins.Node) (*driverv1.Node, error) {
	di, err := wire.MapToStruct(n.DriverInfo)
	if err != nil {
		return nil, fmt.Errorf("node %s: driver_info: %w", n.UUID, err)
	}
	ii, err := wire.MapToStruct(n.InstanceInfo)
	if err != nil {
		return nil, fmt.Errorf("node %s: instance_info: %w", n.UUID, err)
	}
	return &driverv1.Node{Uuid: n.UUID, Name: n.Name, HardwareType: n.HardwareType, DriverInfo: di, InstanceInfo: ii}, nil
}

func infoFromProto(p *driverv1.InfoResponse) plugins.Info {
	i := plugins.Info{
		Name:             p.GetName(),
		Version:          p.GetVersion(),
		HardwareTypes:    p.GetHardwareTypes(),
		Interfaces:       map[plugins.Interface][]int{},
		ProtocolVersions: fromInt32s(p.GetProtocolVersions()),
	}
	for name, vs := range p.GetInterfaces() {
		versions := fromInt32s(vs.GetVersions())
		slices.Sort(versions)
		i.Interfaces[plugins.Interface(name)] = versions
	}
	for _, c := range p.GetCapabilities() {
		i.Capabilities = append(i.Capabilities, plugins.Capability(c))
	}
	slices.Sort(i.Capabilities)
	return i
}

func negotiationToProto(n plugins.Negotiation) *driverv1.ConfigureRequest {
	p := &driverv1.ConfigureRequest{
		ProtocolVersion: int32(n.Protocol),
		Interfaces:      map[string]int32{},
		HostVersion:     n.HostVersion,
	}
	for iface, v := range n.Interfaces {
		p.Interfaces[string(iface)] = int32(v)
	}
	return p
}

func cleanStepToProto(s plugins.CleanStep) (*driverv1.CleanStep, error) {
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

func cleanStepFromProto(p *driverv1.CleanStep) plugins.CleanStep {
	return plugins.CleanStep{
		Interface: plugins.Interface(p.GetInterface()),
		Step:      p.GetStep(),
		Priority:  int(p.GetPriority()),
		Abortable: p.GetAbortable(),
		Args:      p.GetArgs().AsMap(),
		Phases:    stepPhases(p.GetPhases()),
	}
}

// stepPhases converts the wire's phases; none stays nil (clean only).
func stepPhases(in []string) []plugins.StepPhase {
	if len(in) == 0 {
		return nil
	}
	out := make([]plugins.StepPhase, len(in))
	for i, ph := range in {
		out[i] = plugins.StepPhase(ph)
	}
	return out
}

func inventoryFromProto(p *driverv1.InspectResponse) plugins.Inventory {
	inv := plugins.Inventory{CPUs: int(p.GetCpus()), CPUArch: p.GetCpuArch(), MemoryMB: p.GetMemoryMb(), LocalGB: p.GetLocalGb()}
	for _, n := range p.GetNics() {
		inv.NICs = append(inv.NICs, plugins.NIC{Name: n.GetName(), MACAddress: n.GetMacAddress()})
	}
	return inv
}

func fromInt32s(vs []int32) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
	}
	return out
}
