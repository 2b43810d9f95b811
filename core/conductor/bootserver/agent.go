package bootserver

import (
	"strings"

	"github.com/rivetmetal/rivet/core/states"
)

// Ironic's driver_info keys naming the agent ramdisk: deploy_iso (or the
// older redfish_deploy_iso) for virtual media, deploy_kernel and
// deploy_ramdisk for network boot.
const (
	InfoDeployISO        = "deploy_iso"
	InfoRedfishDeployISO = "redfish_deploy_iso"
	InfoDeployKernel     = "deploy_kernel"
	InfoDeployRamdisk    = "deploy_ramdisk"
)

// agentStates are the provision states whose nodes boot the agent ramdisk
// named in driver_info rather than their instance_info image.
var agentStates = map[string]bool{string(states.Inspecting): true, string(states.InspectWait): true}

// AgentRamdisk returns the instance_info keys a deploy boots (boot_iso, or
// kernel and ramdisk) for the agent ramdisk driver_info names, nil when
// it names none. With callback ("" for none), the base URL of Rivet's API,
// network-booted ramdisks get ipa-inspection-callback-url and ipa-api-url
// on their kernel command line, as Ironic passes them.
func AgentRamdisk(driverInfo map[string]any, callback string) map[string]any {
	str := func(k string) string { s, _ := driverInfo[k].(string); return strings.TrimSpace(s) }
	out := map[string]any{}
	if iso := str(InfoDeployISO); iso != "" {
		out[KeyBootISO] = iso
	} else if iso := str(InfoRedfishDeployISO); iso != "" {
		out[KeyBootISO] = iso
	}
	if k, r := str(InfoDeployKernel), str(InfoDeployRamdisk); k != "" && r != "" {
		out[KeyKernel], out[KeyRamdisk] = k, r
	}
	if len(out) == 0 {
		return nil
	}
	if callback = strings.TrimRight(strings.TrimSpace(callback), "/"); callback != "" {
		out[KeyKernelAppendParams] = "ipa-inspection-callback-url=" + callback + "/v1/continue_inspection ipa-api-url=" + callback
	}
	return out
}
