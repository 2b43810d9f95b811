package conductor

import (
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// validateBootServer refuses a network-boot deploy this conductor cannot
// serve: with the pxe boot interface (the one left when [conductor]
// boot_http_address is empty) nothing hands the node its ramdisk, so a
// deploy would power-cycle it into nothing and still report it active.
func (s *Service) validateBootServer(n *objects.Node, iface string) rpc.InterfaceValidation {
	impl, err := s.nodeInterface(n, catalog.Boot)
	if err != nil || (impl != catalog.PXE && impl != catalog.IPXE) || s.cfg.BootHTTPAddress != "" {
		return ok()
	}
	return notOK("Cannot validate %s interface: the %s boot interface network-boots the node from iPXE scripts "+
		"this conductor does not serve: [conductor] boot_http_address is not set. Set it (and point DHCP at it, "+
		"see docs/admin/conductor.md, Network boot), or deploy with a hardware type that boots virtual media (redfish).",
		iface, impl)
}
