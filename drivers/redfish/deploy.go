package redfish

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// KeyBootISO is the instance_info key naming the ISO the ramdisk deploy
// boots, as Ironic's ramdisk deploy interface names it. image_source,
// kernel and ramdisk are not used: virtual media boots one ISO.
const KeyBootISO = "boot_iso"

// bootISO validates instance_info's boot_iso: an absolute http(s) URL the
// BMC can fetch.
func bootISO(node plugins.Node) (string, error) {
	v, _ := node.InstanceInfo[KeyBootISO].(string)
	u, err := url.Parse(v)
	if v == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("driver redfish: node %s: %w: %s must be an http(s) URL of an ISO",
			node.UUID, ErrInvalidInstanceInfo, KeyBootISO)
	}
	return v, nil
}

// PrepareDeploy implements plugins.DeployPreparer: it checks instance_info
// and that the system has a CD-capable virtual media slot its BMC's profile
// can use, changing nothing.
func (d *Driver) PrepareDeploy(ctx context.Context, node plugins.Node) error {
	iso, err := bootISO(node)
	if err != nil {
		return err
	}
	return d.call(ctx, node, "prepare deploy", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		m, err := findMedia(t, sys)
		if err != nil {
			return err
		}
		if m.prof.plainImageURL && strings.ContainsAny(iso, "?=") {
			return fmt.Errorf("%w: %s: %s BMCs refuse '?' and '=' in image URLs",
				ErrInvalidInstanceInfo, KeyBootISO, m.prof.name)
		}
		_, err = m.cdSlot()
		return err
	})
}

// Deploy implements plugins.Deployer, the ramdisk deploy over virtual
// media: eject what the CD slots hold, insert instance_info boot_iso, set a
// one-time Cd boot, power on (or restart a running node) and wait until it
// is On. The node is then active, running the ISO.
func (d *Driver) Deploy(ctx context.Context, node plugins.Node) error {
	iso, err := bootISO(node)
	if err != nil {
		return err
	}
	err = d.call(ctx, node, "deploy", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		m, err := findMedia(t, sys)
		if err != nil {
			return err
		}
		slot, err := m.cdSlot()
		if err != nil {
			return err
		}
		if err := m.ejectAll(); err != nil {
			return err
		}
		if err := m.insert(t.c, slot, iso); err != nil {
			return err
		}
		if err := setBoot(t, plugins.BootDeviceSetting{Device: plugins.BootCDROM, Mode: instanceBootMode(node)}); err != nil {
			return fmt.Errorf("set boot device: %w", err)
		}
		if sys, err = t.system(); err != nil {
			return err
		}
		t.logger.Info("booting the deploy ISO from virtual media", "media", m.where, "slot", slot.ID)
		if powerOf(sys.PowerState) == plugins.PowerOff {
			return reset(sys, actOn)
		}
		return reset(sys, actRestart)
	})
	if err != nil {
		return err
	}
	return d.waitPower(ctx, node, "deploy", schemas.OnPowerState, 0)
}

// TearDown implements plugins.DeployTearDowner: power off (hard), wait
// until Off, eject the CD slots. A torn-down node is left as it is.
func (d *Driver) TearDown(ctx context.Context, node plugins.Node) error {
	if err := d.switchPower(ctx, node, "tear down", schemas.OffPowerState, actOff, 0); err != nil {
		return err
	}
	return d.call(ctx, node, "tear down", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		m, err := findMedia(t, sys)
		if err != nil {
			return err
		}
		return m.ejectAll()
	})
}

// instanceBootMode is instance_info's "boot_mode" ("uefi", "bios"; the
// conductor fills in the mode it recorded for the node when the user set
// none), or BootModeUnknown to leave the system's as it is.
func instanceBootMode(node plugins.Node) plugins.BootMode {
	s, _ := node.InstanceInfo["boot_mode"].(string)
	m, err := plugins.ParseBootMode(s)
	if err != nil {
		return plugins.BootModeUnknown
	}
	return m
}
