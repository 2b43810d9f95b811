package conductor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/plugins"
)

// validatedInterfaces are the interfaces validate_driver_interfaces
// reports, as Ironic's GET /v1/nodes/{id}/validate.
var validatedInterfaces = []string{"bios", "boot", "console", "deploy", "firmware", "inspect", "management", "network", "power", "raid", "rescue", "storage"}

// validateDriverInterfaces reports, per interface, whether the node can use
// it and why not. It takes no lease. A driver with a Validate hook checks
// its own driver_info and instance_info keys and, for power and
// management, reaches the BMC (bounded and cached, validate_driver.go); a
// driver without one (an older plugin) gets the conductor's own checks.
// The interfaces are validated concurrently, so a dead BMC costs one
// deadline, not one per interface.
func (s *Service) validateDriverInterfaces(ctx context.Context, p rpc.Params) (any, error) {
	n, err := s.sharedByParam(ctx, p)
	if err != nil {
		return nil, err
	}
	hw, err := s.hardware(n)
	if err != nil {
		return nil, err
	}
	results := make([]rpc.InterfaceValidation, len(validatedInterfaces))
	var wg sync.WaitGroup
	for i, name := range validatedInterfaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.validateInterface(ctx, n, hw, name)
		}()
	}
	wg.Wait()
	out := make(map[string]rpc.InterfaceValidation, len(validatedInterfaces))
	for i, name := range validatedInterfaces {
		out[name] = results[i]
	}
	return out, nil
}

func ok() rpc.InterfaceValidation { return rpc.InterfaceValidation{Result: true} }

func notOK(format string, args ...any) rpc.InterfaceValidation {
	reason := fmt.Sprintf(format, args...)
	return rpc.InterfaceValidation{Result: false, Reason: &reason}
}

// validateInterface validates one interface of n with the implementation
// it uses: one it names that this conductor does not enable fails with the
// catalog's reason; none, or a no-* implementation, is "not supported".
func (s *Service) validateInterface(ctx context.Context, n *objects.Node, hw Hardware, name string) rpc.InterfaceValidation {
	if name == "deploy" {
		if v := s.validateInstanceTraits(ctx, n); !v.Result {
			return v
		}
	}
	uses := func(iface string) (bool, rpc.InterfaceValidation) {
		impl, err := s.nodeInterface(n, iface)
		if err != nil {
			return false, notOK("%s", err.Error())
		}
		if impl == "" || catalog.Unsupported(impl) {
			return false, notOK("not supported")
		}
		return true, ok()
	}
	switch name {
	case "power", "management", "inspect":
		if has, v := uses(name); !has {
			return v
		}
		if name == catalog.Inspect && s.usesAgentInspect(n) {
			return s.validateAgentInspect(n)
		}
		if v, handled := s.driverValidate(ctx, n, hw, plugins.Interface(name)); handled {
			return v
		}
		return s.validateDriverInfo(n)
	case "deploy", "boot":
		for _, iface := range []string{catalog.Deploy, name} {
			if has, v := uses(iface); !has {
				return v
			}
		}
		if s.isDirect(n) {
			// The conductor's own deploy: it checks how to boot the agent
			// and the image to write (direct_deploy.go).
			if err := validateDirect(n); err != nil {
				return notOK("%s", err.Error())
			}
			return ok()
		}
		if v, handled := s.driverValidate(ctx, n, hw, plugins.InterfaceDeploy); handled {
			if !v.Result || n.Driver == "fake-hardware" {
				return v
			}
			return checkImageRefs(n, name)
		}
		if v := s.validateDriverInfo(n); !v.Result {
			return v
		}
		if v := validateInstanceInfo(n, name); !v.Result {
			return v
		}
		return s.validateBootServer(n, name)
	case "network":
		_, v := uses(name)
		return v
	case "storage":
		return ok() // noop
	case "raid":
		// Ironic's RAIDInterface.validate: the target, when there is one,
		// and what reaching the BMC needs.
		if has, v := uses(name); !has {
			return v
		}
		if len(n.TargetRAIDConfig) > 0 {
			if err := checkRAIDConfig(n.TargetRAIDConfig); err != nil {
				return notOK("%s", err.Error())
			}
		}
		return s.validateDriverInfo(n)
	case "console":
		_, v := uses(name)
		return v
	case "bios", "firmware":
		// As Ironic's redfish bios and firmware interfaces: the driver_info
		// the BMC is reached with (the plugin's Validate for the interface).
		if has, v := uses(name); !has {
			return v
		}
		if v, handled := s.driverValidate(ctx, n, hw, plugins.Interface(name)); handled {
			return v
		}
		return s.validateDriverInfo(n)
	}
	return notOK("not supported")
}

// validateDriverInfo checks the required driver_info keys, naming the
// missing ones (never a value).
func (s *Service) validateDriverInfo(n *objects.Node) rpc.InterfaceValidation {
	err := plugins.DriverInfo(n.DriverInfo).Require(requiredKeys[n.Driver]...)
	if err != nil {
		return notOK("Some parameters were missing in node's driver_info: %s", strings.TrimPrefix(err.Error(), plugins.ErrInvalidDriverInfo.Error()+": missing "))
	}
	return ok()
}

// validateInstanceInfo checks what a ramdisk deploy needs: boot_iso, or
// kernel and ramdisk, and that every image reference is a URL or an image
// id (checkImageRefs). fake-hardware needs nothing.
func validateInstanceInfo(n *objects.Node, iface string) rpc.InterfaceValidation {
	if n.Driver == "fake-hardware" {
		return ok()
	}
	str := func(k string) string { v, _ := n.InstanceInfo[k].(string); return strings.TrimSpace(v) }
	if str("boot_iso") != "" || (str("kernel") != "" && str("ramdisk") != "") {
		return checkImageRefs(n, iface)
	}
	return notOK("Cannot validate %s interface: missing instance_info: boot_iso (or kernel and ramdisk)", iface)
}

// getVendorPassthruMethods lists the driver's vendor methods: none, Rivet
// plugins expose no vendor passthru.
func (s *Service) getVendorPassthruMethods(ctx context.Context, p rpc.Params) (any, error) {
	n, err := s.sharedByParam(ctx, p)
	if err != nil {
		return nil, err
	}
	if _, err := s.hardware(n); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// vendorPassthru is not supported by any Rivet driver.
func (s *Service) vendorPassthru(ctx context.Context, p rpc.Params) (any, error) {
	n, err := s.sharedByParam(ctx, p)
	if err != nil {
		return nil, err
	}
	if _, err := s.hardware(n); err != nil {
		return nil, err
	}
	return nil, errUnsupported(n.Driver, "vendor")
}

// getDriverProperties returns the driver_info keys of a hardware type this
// conductor serves, with their descriptions: those the driver declares
// (capability properties), or, for a driver that declares none (a plugin
// built with an older SDK), the conductor's own table of the built-in
// hardware types.
func (s *Service) getDriverProperties(ctx context.Context, p rpc.Params) (any, error) {
	hw, err := p.String("driver_name")
	if err != nil {
		return nil, err
	}
	d, err := s.drivers.Hardware(hw)
	if err != nil {
		return nil, errDriverNotFound(hw)
	}
	if declared, err := declaredProperties(ctx, d); err == nil {
		return declared, nil
	} else if !errors.Is(err, plugins.ErrNotSupported) {
		return nil, err
	}
	props, ok := driverProperties[hw]
	if !ok {
		props = map[string]string{}
	}
	return props, nil
}

// declaredProperties asks d for the driver_info keys it declares, as the
// API lists them: name to description ending "Required." or "Optional.".
// ErrNotSupported when d declares none.
func declaredProperties(ctx context.Context, d Hardware) (map[string]string, error) {
	var list []plugins.Property
	switch pd := d.(type) {
	case interface {
		Properties(context.Context) ([]plugins.Property, error)
	}:
		cctx, cancel := context.WithTimeout(ctx, validateDeadline)
		defer cancel()
		l, err := pd.Properties(cctx)
		if err != nil {
			return nil, err
		}
		list = l
	case plugins.PropertyDeclarer:
		list = pd.Properties()
	default:
		return nil, plugins.ErrNotSupported
	}
	out := make(map[string]string, len(list))
	for _, p := range list {
		out[p.Name] = PropertyDescription(p)
	}
	return out, nil
}

// PropertyDescription is p's description as Ironic's properties end: with
// "Required." or "Optional.".
func PropertyDescription(p plugins.Property) string {
	desc := strings.TrimSpace(p.Description)
	if strings.HasSuffix(desc, "Required.") || strings.HasSuffix(desc, "Optional.") {
		return desc
	}
	if desc != "" && !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	if desc != "" {
		desc += " "
	}
	if p.Required {
		return desc + "Required."
	}
	return desc + "Optional."
}
