package ipmi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/plugins"
)

// driver_info keys Ironic's ipmitool driver takes that this driver checks
// but does not use beyond that: they must hold what Ironic allows, and a
// value asking for something this driver cannot do (bridging, IPMI 1.5) is
// refused rather than silently ignored.
const (
	KeyBridging        = "ipmi_bridging"
	KeyProtocolVersion = "ipmi_protocol_version"
	KeyTerminalPort    = "ipmi_terminal_port"
	KeyDeployKernel    = "deploy_kernel"
	KeyDeployRamdisk   = "deploy_ramdisk"
)

var (
	_ plugins.Validator        = (*Driver)(nil)
	_ plugins.PropertyDeclarer = (*Driver)(nil)
)

// Properties implements plugins.PropertyDeclarer: the driver_info keys this
// driver reads, with Ironic's descriptions.
func (d *Driver) Properties() []plugins.Property {
	return []plugins.Property{
		{Name: KeyAddress, Required: true, Description: "IP address or hostname of the node."},
		{Name: KeyUsername, Description: "username; default is NULL user. At most 16 bytes."},
		{Name: KeyPassword, Description: "password."},
		{Name: KeyPort, Description: "remote IPMI RMCP port, 1 to 65535; default 623."},
		{Name: KeyCipherSuite, Description: fmt.Sprintf("IPMI cipher suite to use; defaults to [ipmi] cipher_suite. This driver supports suites %v.", supportedSuites)},
		{Name: KeyPrivLevel, Description: "privilege level; default is ADMINISTRATOR. One of " + strings.Join(slices.Sorted(maps.Keys(privLevels)), ", ") + "."},
		{Name: KeyBridging, Description: "bridging type: only \"no\" is supported."},
		{Name: KeyProtocolVersion, Description: "the version of the IPMI protocol: only \"2.0\" is supported."},
		{Name: KeyTimeout, Description: "seconds one command attempt waits for an answer; defaults to [ipmi] command_timeout."},
		{Name: KeyRetries, Description: "times a command that timed out is sent again, 0 to 10; defaults to [ipmi] retries."},
		{Name: KeyMinCommandInterval, Description: "minimum seconds between two commands to the BMC; defaults to [ipmi] min_command_interval."},
		{Name: KeyPowerStateChangeTimeout, Description: "seconds to wait for a power state change; defaults to [ipmi] power_state_change_timeout."},
		{Name: KeyDeployKernel, Description: "URL or image id of the deployment kernel."},
		{Name: KeyDeployRamdisk, Description: "URL or image id of the deployment ramdisk."},
	}
}

// Validate implements plugins.Validator. Every driver_info key is parsed
// and type-checked; for power and management the BMC is asked for its
// chassis status with the node's credentials, so a wrong password or a
// dead BMC shows here (plugins.ErrCredentialsRefused,
// plugins.ErrBMCUnreachable); for deploy, instance_info is checked too.
func (d *Driver) Validate(ctx context.Context, node plugins.Node, iface plugins.Interface) error {
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err == nil {
		err = checkExtraInfo(node.DriverInfo)
	}
	if err != nil {
		return fmt.Errorf("ipmi: %w", err)
	}
	switch iface {
	case plugins.InterfacePower, plugins.InterfaceManagement:
		_, err := d.powerState(ctx, p)
		return err
	case plugins.InterfaceDeploy:
		if _, err := parseInstanceInfo(node.InstanceInfo); err != nil {
			return fmt.Errorf("ipmi: %w", err)
		}
		for _, k := range []string{InstanceBootISO, InstanceKernel, InstanceRamdisk} {
			if s, _ := node.InstanceInfo[k].(string); strings.TrimSpace(s) != "" {
				if err := plugins.CheckImageRef(s); err != nil {
					return fmt.Errorf("ipmi: %w: %s: %v", ErrInvalidInstanceInfo, k, err)
				}
			}
		}
	}
	return nil
}

// checkExtraInfo checks the keys parseInfo does not read.
func checkExtraInfo(info plugins.DriverInfo) error {
	var bad []string
	str := func(k string) (string, bool) {
		v, present := info[k]
		if !present || v == nil {
			return "", false
		}
		s, ok := v.(string)
		if !ok {
			bad = append(bad, k)
			return "", false
		}
		return strings.TrimSpace(s), s != ""
	}
	// ipmi_priv_level is parseInfo's: it is used, not only checked.
	if s, ok := str(KeyBridging); ok && s != "no" {
		bad = append(bad, KeyBridging)
	}
	if v, present := info[KeyProtocolVersion]; present && v != nil {
		if f, err := number(v); err != nil || f != 2 {
			bad = append(bad, KeyProtocolVersion)
		}
	}
	var port int
	if err := intValue(info, KeyTerminalPort, &port, 1, 65535); err != nil {
		bad = append(bad, KeyTerminalPort)
	}
	for _, k := range []string{KeyDeployKernel, KeyDeployRamdisk} {
		if s, ok := str(k); ok && plugins.CheckImageRef(s) != nil {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		return &plugins.InvalidDriverInfoError{Invalid: bad}
	}
	return nil
}
