package conductor

import (
	"errors"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
)

// catalog returns this conductor's hardware interface catalog, built from
// the plugins negotiated now (a swapped plugin shows at once) and its own
// implementations. The catalog last built is reused while what the plugins
// negotiated is the same: listing that is a few slice operations, building
// the catalog a few hundred map operations, and every create_node and
// interface lookup asks (4% of a conductor's CPU during enrolment).
func (s *Service) catalog() *catalog.Catalog {
	var served []catalog.Served
	for _, hw := range s.drivers.HardwareTypes() {
		sv := catalog.Served{HardwareType: hw}
		for _, i := range s.drivers.Interfaces(hw) {
			sv.Interfaces = append(sv.Interfaces, string(i))
		}
		served = append(served, sv)
	}
	opts := catalog.Options{BootServer: s.cfg.BootHTTPAddress != "", Rescue: slices.Sorted(maps.Keys(s.rescuers)),
		DefaultDeploy: s.cfg.DefaultDeploy}
	return s.catalogs.get(served, opts)
}

// catalogCache holds the catalog built for one set of negotiated
// interfaces; a Catalog is not changed once built, so callers share it.
type catalogCache struct {
	mu     sync.Mutex
	served []catalog.Served
	opts   catalog.Options
	cat    *catalog.Catalog
}

func (c *catalogCache) get(served []catalog.Served, opts catalog.Options) *catalog.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	same := c.cat != nil && c.opts.BootServer == opts.BootServer && c.opts.DefaultDeploy == opts.DefaultDeploy && slices.Equal(c.opts.Rescue, opts.Rescue) && slices.EqualFunc(c.served, served, func(a, b catalog.Served) bool {
		return a.HardwareType == b.HardwareType && slices.Equal(a.Interfaces, b.Interfaces)
	})
	if !same {
		c.served, c.opts, c.cat = served, opts, catalog.ForConductor(served, opts)
	}
	return c.cat
}

// interfaceError classes the catalog's errors as Ironic does (400).
func interfaceError(err error) error {
	var nf *catalog.NotFoundError
	var inc *catalog.IncompatibleError
	switch {
	case errors.As(err, &nf):
		return classed("InterfaceNotFoundInEntrypoint", http.StatusBadRequest, err, "%s", err.Error())
	case errors.As(err, &inc):
		return classed("IncompatibleInterface", http.StatusBadRequest, err, "%s", err.Error())
	}
	return err
}

// checkInterfaces validates the implementations n names against this
// conductor's catalog and fills the unset ones with its hardware type's
// defaults (Ironic's check_and_update_node_interfaces, run on create and on
// an update of the driver or an interface).
func (s *Service) checkInterfaces(n *objects.Node) error {
	if _, err := s.catalog().Check(n); err != nil {
		return interfaceError(err)
	}
	return nil
}

// nodeInterface returns the implementation of iface node n uses (named, or
// its hardware type's default here); "" when there is none. Naming one this
// conductor does not enable is a classed error.
func (s *Service) nodeInterface(n *objects.Node, iface string) (string, error) {
	impl, err := s.catalog().Resolve(n, iface)
	return impl, interfaceError(err)
}

// requireInterface fails with UnsupportedDriverExtension unless n uses an
// implementation of iface that does something (not none, not no-*).
func (s *Service) requireInterface(n *objects.Node, iface string) error {
	impl, err := s.nodeInterface(n, iface)
	if err != nil {
		return err
	}
	if impl == "" || catalog.Unsupported(impl) {
		return errUnsupported(n.Driver, iface)
	}
	return nil
}

// interfaceUpdateStates are the states a node's interfaces may change in
// outside maintenance, as Ironic's update_node.
var interfaceUpdateStates = []states.State{states.Enroll, states.Inspecting, states.InspectWait, states.Manageable, states.Available}

// checkInterfaceUpdate is update_node's rule for the fields it applies:
// changing an interface needs one of interfaceUpdateStates or maintenance;
// changing the driver or an interface re-checks them all.
func (s *Service) checkInterfaceUpdate(n *objects.Node, applied []string) error {
	check := slices.Contains(applied, "driver")
	for _, iface := range catalog.Types() {
		field := catalog.Field(iface)
		if !slices.Contains(applied, field) {
			continue
		}
		if !slices.Contains(interfaceUpdateStates, states.State(n.ProvisionState)) && !n.Maintenance {
			allowed := make([]string, len(interfaceUpdateStates))
			for i, st := range interfaceUpdateStates {
				allowed[i] = string(st)
			}
			return errInvalidState("Node %s can not have %s updated unless it is in one of allowed (%s) states or in maintenance mode. Current state is '%s'.",
				n.UUID, field, strings.Join(allowed, ", "), n.ProvisionState)
		}
		check = true
	}
	if check {
		return s.checkInterfaces(n)
	}
	return nil
}

// senderChanges drops from changed the fields the version sent lacks and
// that hold their default: the upward conversion filled them in, the sender
// did not set them. Without this, an update from a service pinned to 0.1
// (Node 1.0) would reset every interface choice, and on an active node be
// refused for changing them. A field a converter filled from the sender's
// data (a moved value) holds no default and is kept.
func senderChanges(reg *objects.Registry, n *objects.Node, sent version.Version, changed []string) ([]string, error) {
	fields, err := reg.FieldTable("Node")
	if err != nil {
		return nil, err
	}
	out := changed[:0:0]
	for _, f := range changed {
		i := slices.IndexFunc(fields, func(fd objects.Field) bool { return fd.Name == f })
		if i >= 0 && !reg.Available("Node", f, sent) {
			val, err := reg.Get(n, f)
			if err != nil {
				return nil, err
			}
			if isDefault(val, fields[i]) {
				continue
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// isDefault reports whether val is field f's default.
func isDefault(val any, f objects.Field) bool {
	v := reflect.ValueOf(val)
	if f.Nullable {
		return !v.IsValid() || v.IsNil()
	}
	if f.Default == nil {
		return !v.IsValid() || v.IsZero()
	}
	return reflect.DeepEqual(val, f.Default)
}
