package catalog

import (
	"fmt"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
)

// NotFoundError is Ironic's InterfaceNotFoundInEntrypoint (HTTP 400): no
// hardware type enables an implementation of that name.
type NotFoundError struct {
	Interface string
	Name      string
	// Valid are the implementations of Interface any hardware type enables.
	Valid []string
}

// Error gives Ironic's text, the valid names as a Python list.
func (e *NotFoundError) Error() string {
	quoted := make([]string, len(e.Valid))
	for i, v := range e.Valid {
		quoted[i] = "'" + v + "'"
	}
	return fmt.Sprintf("Could not find the following interface in the 'ironic.hardware.interfaces.%s' entrypoint: %s. Valid interfaces are [%s].",
		e.Interface, e.Name, strings.Join(quoted, ", "))
}

// IncompatibleError is Ironic's IncompatibleInterface (HTTP 400): the
// implementation exists, but not for the node's hardware type.
type IncompatibleError struct {
	Interface    string
	Name         string
	HardwareType string
}

// Error gives Ironic's text.
func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("%s interface implementation '%s' is not supported by hardware type %s.", e.Interface, e.Name, e.HardwareType)
}

// check returns nil if hw enables name for iface.
func (c *Catalog) check(hw, iface, name string) error {
	im := c.hw[hw][iface]
	for _, n := range im.Enabled {
		if n == name {
			return nil
		}
	}
	valid := c.Enabled(iface)
	for _, n := range valid {
		if n == name {
			return &IncompatibleError{Interface: iface, Name: name, HardwareType: hw}
		}
	}
	return &NotFoundError{Interface: iface, Name: name, Valid: valid}
}

// Check is Ironic's check_and_update_node_interfaces: every implementation
// n names must be enabled for its hardware type, and every interface it
// names none for gets the hardware type's default (one without a default
// stays unset). It returns the fields it set, in Types order; on error it
// changes nothing.
func (c *Catalog) Check(n *objects.Node) (filled []string, err error) {
	for _, iface := range types {
		if p := n.InterfaceField(iface); *p != nil {
			if err := c.check(n.Driver, iface, **p); err != nil {
				return nil, err
			}
		}
	}
	for _, iface := range types {
		p := n.InterfaceField(iface)
		if *p == nil {
			if def := c.hw[n.Driver][iface].Default; def != "" {
				*p = &def
				filled = append(filled, Field(iface))
			}
		}
	}
	return filled, nil
}

// Resolve returns the implementation of iface n uses: the one it names,
// else its hardware type's default; "" when there is none. A named
// implementation the hardware type does not enable is Check's error.
func (c *Catalog) Resolve(n *objects.Node, iface string) (string, error) {
	p := n.InterfaceField(iface)
	if p == nil || *p == nil {
		return c.hw[n.Driver][iface].Default, nil
	}
	if err := c.check(n.Driver, iface, **p); err != nil {
		return "", err
	}
	return **p, nil
}
