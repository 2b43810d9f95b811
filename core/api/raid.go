package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
)

// RAID (API 1.12): PUT /v1/nodes/{node}/states/raid sets a node's
// target_raid_config after checking it against Ironic's RAID configuration
// schema (ironic/drivers/raid_config_schema.json) with Ironic's messages;
// GET /v1/drivers/{driver}/raid/logical_disk_properties describes the
// schema's logical disk properties. The raid steps that apply a target are
// the conductor's (core/conductor/raid.go).

// raidLevels are the schema's raid_level values, in its order.
var raidLevels = []string{"JBOD", "0", "1", "2", "5", "6", "1+0", "5+0", "6+0"}

// raidDiskProps are the logical disk properties, in the schema's order,
// with its descriptions.
var raidDiskProps = []struct{ name, description string }{
	{"raid_level", "RAID level for the logical disk. Valid values are 'JBOD', '0', '1', '2', '5', '6', '1+0', '5+0' and '6+0'. Required."},
	{"size_gb", "Size in GiB (Integer) for the logical disk. Use 'MAX' as size_gb if this logical disk is supposed to use the rest of the space available. Required."},
	{"volume_name", "Name of the volume to be created. If this is not specified, it will be auto-generated. Optional."},
	{"is_root_volume", "Specifies whether this disk is a root volume. By default, this is False. Optional."},
	{"share_physical_disks", "Specifies whether other logical disks can share physical disks with this logical disk. By default, this is False. Optional."},
	{"disk_type", "The type of disk preferred. Valid values are 'hdd' and 'ssd'. If this is not specified, disk type will not be a selection criterion for choosing backing physical disks. Optional."},
	{"interface_type", "The interface type of disk. Valid values are 'sata', 'scsi' and 'sas'. If this is not specified, interface type will not be a selection criterion for choosing backing physical disks. Optional."},
	{"number_of_physical_disks", "Number of physical disks to use for this logical disk. By default, the driver uses the minimum number of disks required for that RAID level. Optional."},
	{"controller", "Controller to use for this logical disk. If not specified, the driver will choose a suitable RAID controller on the bare metal node. Optional."},
	{"physical_disks", "The physical disks to use for this logical disk. If not specified, the driver will choose suitable physical disks to use. Optional."},
}

// enumCheck is {"type": "string", "enum": values}.
func enumCheck(values ...string) func(c *schemaCheck, d int, v any) {
	return func(c *schemaCheck, d int, v any) {
		if c.typeOK(d, v, "string") && !slices.Contains(values, v.(string)) {
			quoted := make([]string, len(values))
			for i, x := range values {
				quoted[i] = "'" + x + "'"
			}
			c.add(d, fmt.Sprintf("%s is not one of [%s]", pyrepr.Value(v), strings.Join(quoted, ", ")))
		}
	}
}

// sizeGB is {"anyOf": [{"type": "integer", "minimum": 0}, {"type":
// "string", "enum": ["MAX"]}]}; jsonschema's best_match reports the error
// of the alternative whose type the value has.
func sizeGB(c *schemaCheck, d int, v any) {
	switch jsonType(v) {
	case "integer":
		if jsonNumber(v) < 0 {
			c.add(d, fmt.Sprintf("%s is less than the minimum of 0", v))
		}
	case "string":
		if v.(string) != "MAX" {
			c.add(d, fmt.Sprintf("%s is not one of ['MAX']", pyrepr.Value(v)))
		}
	default:
		c.add(d, fmt.Sprintf("%s is not of type 'integer'", pyrepr.Value(v)))
	}
}

// physicalDisks is {"anyOf": [{"type": "array", "items": {"type":
// "string"}}, {"type": "array", "items": {"type": "object"}, "minItems":
// 2}]}.
func physicalDisks(c *schemaCheck, d int, v any) {
	list, ok := v.([]any)
	if !ok {
		c.add(d, fmt.Sprintf("%s is not of type 'array'", pyrepr.Value(v)))
		return
	}
	allStrings, allObjects := true, true
	for _, it := range list {
		allStrings = allStrings && jsonType(it) == "string"
		allObjects = allObjects && jsonType(it) == "object"
	}
	switch {
	case allStrings:
	case allObjects && len(list) >= 2:
	case allObjects:
		c.add(d, fmt.Sprintf("%s is too short", pyrepr.Value(v)))
	default:
		c.add(d, fmt.Sprintf("%s is not valid under any of the given schemas", pyrepr.Value(v)))
	}
}

// logicalDisk checks one item of logical_disks.
func logicalDisk(c *schemaCheck, d int, v any) {
	if !c.typeOK(d, v, "object") {
		return
	}
	props := []schemaProp{
		{"raid_level", enumCheck(raidLevels...)},
		{"size_gb", sizeGB},
		{"volume_name", func(c *schemaCheck, d int, v any) { c.typeOK(d, v, "string") }},
		{"is_root_volume", func(c *schemaCheck, d int, v any) { c.typeOK(d, v, "boolean") }},
		{"share_physical_disks", func(c *schemaCheck, d int, v any) { c.typeOK(d, v, "boolean") }},
		{"disk_type", enumCheck("hdd", "ssd")},
		{"interface_type", enumCheck("sata", "scsi", "sas")},
		{"number_of_physical_disks", func(c *schemaCheck, d int, v any) {
			if c.typeOK(d, v, "integer") {
				if jsonNumber(v) <= 0 {
					c.add(d, fmt.Sprintf("%s is less than or equal to the minimum of 0", v))
				}
			}
		}},
		{"controller", func(c *schemaCheck, d int, v any) { c.typeOK(d, v, "string") }},
		{"physical_disks", physicalDisks},
	}
	obj := v.(map[string]any)
	c.object(d, obj, props, []string{"raid_level", "size_gb"})
	if _, ok := obj["physical_disks"]; ok {
		if _, ok := obj["controller"]; !ok {
			c.add(d, "'controller' is a dependency of 'physical_disks'")
		}
	}
}

// validateRAIDConfig is Ironic's raid.validate_configuration: the schema,
// then at most one root volume; 400 with Ironic's messages.
func validateRAIDConfig(cfg map[string]any) error {
	c := &schemaCheck{}
	c.object(0, cfg, []schemaProp{{"logical_disks", func(c *schemaCheck, d int, v any) {
		if !c.typeOK(d, v, "array") {
			return
		}
		items := v.([]any)
		for _, it := range items {
			logicalDisk(c, d+1, it)
		}
		if len(items) == 0 {
			c.add(d, "[] should be non-empty")
		}
	}}}, []string{"logical_disks"})
	if len(c.errs) > 0 {
		best := c.errs[0]
		for _, e := range c.errs[1:] {
			if e.depth < best.depth {
				best = e
			}
		}
		return errorf(http.StatusBadRequest, "RAID config validation error: %s", best.msg)
	}
	roots := 0
	for _, it := range cfg["logical_disks"].([]any) {
		if root, _ := it.(map[string]any)["is_root_volume"].(bool); root {
			roots++
		}
	}
	if roots > 1 {
		return errorf(http.StatusBadRequest, "Raid config cannot have more than one root volume. %d root volumes were specified", roots)
	}
	return nil
}

// putRAID serves PUT /v1/nodes/{node}/states/raid (1.12): 204. A node
// whose raid interface does nothing (no-raid, every hardware type's
// default) answers Ironic's 404 UnsupportedDriverExtension unless the
// configuration is empty, which only clears the target, as Ironic's
// set_target_raid_config. The configuration is checked against Ironic's
// schema (400) and saved by the node's conductor.
func (s *server) putRAID(w http.ResponseWriter, r *http.Request) error {
	if !RequireVersion(w, r, v1_12) {
		return nil
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if len(strings.TrimSpace(string(data))) > 0 {
		if cfg, err = asDict(data); err != nil {
			return typeError("target_raid_config", data, "dict")
		}
	}
	if len(cfg) > 0 {
		impl, err := s.nodeRAIDInterface(r, n)
		if err != nil {
			return err
		}
		if impl == "" || catalog.Unsupported(impl) {
			return unsupported(http.StatusNotFound, n.Driver, "raid")
		}
		if err := validateRAIDConfig(cfg); err != nil {
			return err
		}
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	n.TargetRAIDConfig = cfg
	if _, err := s.Conductor.UpdateNode(r.Context(), n); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// nodeRAIDInterface is the node's raid interface: its own or its hardware
// type's default.
func (s *server) nodeRAIDInterface(r *http.Request, n *objects.Node) (string, error) {
	if n.RAIDInterface != nil {
		return *n.RAIDInterface, nil
	}
	cat, err := s.Catalog.Get(r.Context())
	if err != nil {
		return "", err
	}
	return cat.Impls(n.Driver, catalog.RAID).Default, nil
}

// getDriverRAIDProperties serves .../raid/logical_disk_properties (1.12):
// the schema's logical disk properties when the hardware type has a raid
// interface that does something (a node chooses it with raid_interface),
// else Ironic's 404 for a driver without one.
func (s *server) getDriverRAIDProperties(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_12) {
		return errNotAcceptable()
	}
	name, _, err := s.driverExists(r)
	if err != nil {
		return err
	}
	cat, err := s.Catalog.Get(r.Context())
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(cat.Impls(name, catalog.RAID).Enabled, func(impl string) bool { return !catalog.Unsupported(impl) }) {
		return unsupported(http.StatusNotFound, name, "raid")
	}
	props := make(map[string]any, len(raidDiskProps))
	for _, p := range raidDiskProps {
		props[p.name] = p.description
	}
	writeJSON(w, http.StatusOK, props)
	return nil
}
