package objects

import "errors"

// Builtin returns the declarations of every Rivet object kind.
func Builtin() []Kind {
	return []Kind{NodeKind(), PortKind(), PortgroupKind(), ChassisKind(), ConductorKind(),
		VolumeConnectorKind(), VolumeTargetKind(), TraitKind(), DeployTemplateKind(), RunbookKind(), AllocationKind(),
		NodeHistoryKind(), BIOSSettingKind(), InspectionRuleKind(), FirmwareComponentKind()}
}

// Install registers every Rivet object kind in r. cmd calls it once at
// start; any error is a programming error that tests catch first.
func Install(r *Registry) error {
	var errs []error
	for _, k := range Builtin() {
		errs = append(errs, r.Register(k))
	}
	return errors.Join(errs...)
}
