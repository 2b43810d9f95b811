package redfish

import (
	"context"
	"fmt"
	"slices"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// ConsoleName is the console interface this driver serves: the BMC's own
// graphical (KVM-IP) console, as Ironic's redfish-graphical.
const ConsoleName = "redfish-graphical"

// StartConsole implements plugins.ConsoleInterface for the graphical
// console: it checks that the node's system, or a manager of it, has an
// enabled GraphicalConsole service offering KVM-IP, and answers
// {"type": "vnc", "url": the BMC's address}. The console itself is the
// BMC's web console: nothing listens on the conductor (ep is ignored) and
// the user logs in to the BMC there; the URL never carries credentials
// (redfish_address refuses them).
func (d *Driver) StartConsole(ctx context.Context, node plugins.Node, _ plugins.ConsoleEndpoint) (plugins.ConsoleInfo, error) {
	var url string
	err := d.call(ctx, node, "start graphical console", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		if kvm(sys.GraphicalConsole.ServiceEnabled, sys.GraphicalConsole.ConnectTypesSupported) {
			url = t.ni.address + "/"
			return nil
		}
		mgrs, err := sys.ManagedBy()
		if err != nil {
			return err
		}
		for _, m := range mgrs {
			if kvm(m.GraphicalConsole.ServiceEnabled, m.GraphicalConsole.ConnectTypesSupported) {
				url = t.ni.address + "/"
				return nil
			}
		}
		return fmt.Errorf("the BMC reports no enabled graphical console offering KVM-IP (GraphicalConsole of the system or its managers): %w", plugins.ErrNotSupported)
	})
	if err != nil {
		return plugins.ConsoleInfo{}, err
	}
	return plugins.ConsoleInfo{Type: plugins.ConsoleVNC, URL: url}, nil
}

// kvm reports whether a GraphicalConsole is enabled and offers KVM-IP.
func kvm[T ~string](enabled bool, types []T) bool {
	return enabled && slices.Contains(types, T(schemas.KVMIPGraphicalConnectTypesSupported))
}

// StopConsole implements plugins.ConsoleInterface: the BMC's graphical
// console needs nothing stopped on Rivet's side.
func (d *Driver) StopConsole(context.Context, plugins.Node) error { return nil }
