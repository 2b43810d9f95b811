package plugins

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// Conversions between the hand-written types and the generated protocol
// types. Enumerations are validated when they arrive.

func nodeToProto(n Node) (*driverv1.Node, error) {
	di, err := mapToStruct(n.DriverInfo)
	if err != nil {
		return nil, fmt.Errorf("node %s: driver_info: %w", n.UUID, err)
	}
	ii, err := mapToStruct(n.InstanceInfo)
	if err != nil {
		return nil, fmt.Errorf("node %s: instance_info: %w", n.UUID, err)
	}
	return &driverv1.Node{Uuid: n.UUID, Name: n.Name, HardwareType: n.HardwareType, DriverInfo: di, InstanceInfo: ii}, nil
}

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

// mapToStruct converts a JSON-like map. The error names the offending key
// but never its value, which may be a secret.
func mapToStruct(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return nil, nil
	}
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
	for k, v := range m {
		if d, ok := v.(DriverInfo); ok {
			v = map[string]any(d)
		}
		pv, err := structpb.NewValue(v)
		if err != nil {
			return nil, fmt.Errorf("key %q: value of type %T is not JSON-like", k, v)
		}
		out.Fields[k] = pv
	}
	return out, nil
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

func infoFromProto(p *driverv1.InfoResponse) Info {
	i := Info{
		Name:             p.GetName(),
		Version:          p.GetVersion(),
		HardwareTypes:    p.GetHardwareTypes(),
		Interfaces:       map[Interface][]int{},
		ProtocolVersions: fromInt32s(p.GetProtocolVersions()),
	}
	for name, vs := range p.GetInterfaces() {
		versions := fromInt32s(vs.GetVersions())
		slices.Sort(versions)
		i.Interfaces[Interface(name)] = versions
	}
	for _, c := range p.GetCapabilities() {
		i.Capabilities = append(i.Capabilities, Capability(c))
	}
	slices.Sort(i.Capabilities)
	return i
}

func negotiationToProto(n Negotiation) *driverv1.ConfigureRequest {
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

func negotiationFromProto(p *driverv1.ConfigureRequest) Negotiation {
	n := Negotiation{Protocol: int(p.GetProtocolVersion()), Interfaces: map[Interface]int{}, HostVersion: p.GetHostVersion()}
	for iface, v := range p.GetInterfaces() {
		n.Interfaces[Interface(iface)] = int(v)
	}
	return n
}

func cleanStepToProto(s CleanStep) (*driverv1.CleanStep, error) {
	args, err := mapToStruct(s.Args)
	if err != nil {
		return nil, fmt.Errorf("clean step %s: args: %w", s.Step, err)
	}
	return &driverv1.CleanStep{Interface: string(s.Interface), Step: s.Step, Priority: int32(s.Priority), Abortable: s.Abortable, Args: args}, nil
}

func cleanStepFromProto(p *driverv1.CleanStep) CleanStep {
	return CleanStep{
		Interface: Interface(p.GetInterface()),
		Step:      p.GetStep(),
		Priority:  int(p.GetPriority()),
		Abortable: p.GetAbortable(),
		Args:      p.GetArgs().AsMap(),
	}
}

func inventoryToProto(inv Inventory) *driverv1.InspectResponse {
	p := &driverv1.InspectResponse{Cpus: int32(inv.CPUs), CpuArch: inv.CPUArch, MemoryMb: inv.MemoryMB, LocalGb: inv.LocalGB}
	for _, n := range inv.NICs {
		p.Nics = append(p.Nics, &driverv1.NIC{Name: n.Name, MacAddress: n.MACAddress})
	}
	return p
}

func inventoryFromProto(p *driverv1.InspectResponse) Inventory {
	inv := Inventory{CPUs: int(p.GetCpus()), CPUArch: p.GetCpuArch(), MemoryMB: p.GetMemoryMb(), LocalGB: p.GetLocalGb()}
	for _, n := range p.GetNics() {
		inv.NICs = append(inv.NICs, NIC{Name: n.GetName(), MACAddress: n.GetMacAddress()})
	}
	return inv
}

func toInt32s(vs []int) []int32 {
	out := make([]int32, len(vs))
	for i, v := range vs {
		out[i] = int32(v)
	}
	return out
}

func fromInt32s(vs []int32) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
	}
	return out
}
