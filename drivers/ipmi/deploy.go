package ipmi

import (
	"context"
	"fmt"
	"strings"

	"github.com/rivetmetal/rivet/plugins"
)

// instance_info keys the ramdisk deploy reads. The conductor serves the
// node's iPXE script over HTTP and chains to these; the driver only checks
// them and steers the node to boot from the network.
const (
	// InstanceKernel and InstanceRamdisk are the URLs (or image refs) of the
	// ramdisk's kernel and initrd.
	InstanceKernel  = "kernel"
	InstanceRamdisk = "ramdisk"
	// InstanceBootISO is an ISO to boot instead of kernel + ramdisk.
	InstanceBootISO = "boot_iso"
	// InstanceBootMode is "uefi" or "bios" (optional): the boot type set
	// with the one-time PXE override.
	InstanceBootMode = "boot_mode"
)

// deployInput is the parsed instance_info.
type deployInput struct{ mode plugins.BootMode }

// parseInstanceInfo checks instance_info for a network-boot ramdisk: either
// boot_iso, or kernel and ramdisk; boot_mode if set must be uefi or bios.
func parseInstanceInfo(ii map[string]any) (deployInput, error) {
	str := func(k string) string { s, _ := ii[k].(string); return strings.TrimSpace(s) }
	var missing []string
	if str(InstanceBootISO) == "" {
		for _, k := range []string{InstanceKernel, InstanceRamdisk} {
			if str(k) == "" {
				missing = append(missing, k)
			}
		}
	}
	if len(missing) > 0 {
		return deployInput{}, fmt.Errorf("%w: missing %s (or %s)", ErrInvalidInstanceInfo, strings.Join(missing, ", "), InstanceBootISO)
	}
	mode, err := plugins.ParseBootMode(str(InstanceBootMode))
	if err != nil {
		return deployInput{}, fmt.Errorf("%w: %s: %v", ErrInvalidInstanceInfo, InstanceBootMode, err)
	}
	return deployInput{mode: mode}, nil
}

// PrepareDeploy implements plugins.DeployPreparer: it validates
// driver_info and instance_info without touching the BMC, so it is
// idempotent.
func (d *Driver) PrepareDeploy(_ context.Context, node plugins.Node) error {
	if _, err := parseInfo(node.DriverInfo, d.opts); err != nil {
		return fmt.Errorf("ipmi: prepare deploy: %w", err)
	}
	if _, err := parseInstanceInfo(node.InstanceInfo); err != nil {
		return fmt.Errorf("ipmi: prepare deploy: %w", err)
	}
	return nil
}

// Deploy implements plugins.Deployer: a one-time PXE boot override, then a
// reboot (off, on). The node is active once it is powered on; the ramdisk
// it boots is the conductor's to serve.
func (d *Driver) Deploy(ctx context.Context, node plugins.Node) error {
	in, err := parseInstanceInfo(node.InstanceInfo)
	if err != nil {
		return fmt.Errorf("ipmi: deploy: %w", err)
	}
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return fmt.Errorf("ipmi: deploy: %w", err)
	}
	if err := d.SetBootDevice(ctx, node, plugins.BootDeviceSetting{Device: plugins.BootPXE, Mode: in.mode}); err != nil {
		return err
	}
	return d.reboot(ctx, p)
}

// TearDown implements plugins.DeployTearDowner: it powers the node off,
// which is idempotent.
func (d *Driver) TearDown(ctx context.Context, node plugins.Node) error {
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return fmt.Errorf("ipmi: tear down: %w", err)
	}
	return d.setPower(ctx, p, plugins.PowerOff)
}
