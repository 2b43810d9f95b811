package conductor

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/plugins"
)

// The raid interface (API 1.12), as Ironic's RAIDInterface: the conductor
// owns the steps and the node's RAID documents; the driver plugin (raid
// interface version 1, plugins.RAIDInterface) creates and deletes the
// volumes. A node uses it by choosing a raid_interface other than no-raid
// (the hardware type's plugin implementation: "redfish", "fake").
//
//	raid.create_configuration   clean            creates target_raid_config's volumes
//	raid.delete_configuration   clean, deploy, service
//	raid.apply_configuration    deploy, service  sets target_raid_config from its raid_config argument, then creates
//
// After a create, raid_config holds the logical disks as created (with
// last_updated) and, for a root volume, properties local_gb (unless MAX)
// and the capability raid_level, as Ironic's update_raid_info. After a
// delete raid_config is {}.

// raidBoolArg documents a boolean step argument.
func raidBoolArg(desc string) map[string]any {
	return map[string]any{"description": desc, "required": false}
}

// raidSteps lists the raid steps of node n: none unless its raid interface
// does something.
func (s *Service) raidSteps(n *objects.Node) []plugins.CleanStep {
	impl, err := s.nodeInterface(n, catalog.RAID)
	if err != nil || impl == "" || catalog.Unsupported(impl) {
		return nil
	}
	createArgs := map[string]any{
		"create_root_volume":     raidBoolArg("This specifies whether to create the root volume. Defaults to `True`."),
		"create_nonroot_volumes": raidBoolArg("This specifies whether to create the non-root volumes. Defaults to `True`."),
		"delete_existing":        raidBoolArg("Setting this to `True` indicates to delete existing RAID configuration prior to creating the new configuration. Default value is `False`."),
	}
	applyArgs := map[string]any{
		"raid_config":            map[string]any{"description": "The RAID configuration to apply.", "required": true},
		"create_root_volume":     createArgs["create_root_volume"],
		"create_nonroot_volumes": createArgs["create_nonroot_volumes"],
		"delete_existing":        raidBoolArg("Setting this to 'True' indicates to delete existing RAID configuration prior to creating the new configuration. Default value is 'True'."),
	}
	return []plugins.CleanStep{
		{Interface: plugins.InterfaceRAID, Step: "create_configuration", Args: createArgs, Phases: []plugins.StepPhase{plugins.PhaseClean}},
		{Interface: plugins.InterfaceRAID, Step: "delete_configuration", Args: map[string]any{},
			Phases: []plugins.StepPhase{plugins.PhaseClean, plugins.PhaseDeploy, plugins.PhaseService}},
		{Interface: plugins.InterfaceRAID, Step: "apply_configuration", Args: applyArgs,
			Phases: []plugins.StepPhase{plugins.PhaseDeploy, plugins.PhaseService}},
	}
}

// raidDriver returns the raid part of node n's driver, or Ironic's
// UnsupportedDriverExtension: the node uses no-raid, or its plugin did not
// negotiate raid interface version 1 (a plugin built before it).
func (s *Service) raidDriver(n *objects.Node) (plugins.RAIDInterface, error) {
	impl, err := s.nodeInterface(n, catalog.RAID)
	if err != nil {
		return nil, err
	}
	if impl == "" || catalog.Unsupported(impl) || !slices.Contains(s.drivers.Interfaces(n.Driver), plugins.InterfaceRAID) {
		return nil, errUnsupported(n.Driver, catalog.RAID)
	}
	hw, err := s.hardware(n)
	if err != nil {
		return nil, err
	}
	r, ok := hw.(plugins.RAIDInterface)
	if !ok {
		return nil, errUnsupported(n.Driver, catalog.RAID)
	}
	return r, nil
}

// boolArg reads a boolean step argument (a bool, or Ironic's strings).
func boolArg(args map[string]any, key string, def bool) (bool, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return def, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true", "1", "yes", "on", "y", "t":
			return true, nil
		case "false", "0", "no", "off", "n", "f":
			return false, nil
		}
	}
	return false, errInvalidParameter("%s must be a boolean, not %v", key, v)
}

// runRAIDStep runs one raid step under t's lease.
func (s *Service) runRAIDStep(ctx context.Context, t *Task, st plugins.CleanStep) error {
	n := t.Node
	r, err := s.raidDriver(n)
	if err != nil {
		return err
	}
	switch st.Step {
	case "delete_configuration":
		if err := s.driverCall(ctx, n, "delete RAID configuration", func(ctx context.Context, pn plugins.Node) error {
			return r.DeleteRAIDConfiguration(ctx, pn)
		}); err != nil {
			return err
		}
		n.RAIDConfig = map[string]any{}
		return nil
	case "create_configuration":
		return s.createRAID(ctx, t, r, st.Args, false)
	case "apply_configuration":
		cfg, ok := st.Args["raid_config"].(map[string]any)
		if !ok {
			return errInvalidParameter("raid.apply_configuration needs the argument raid_config, a RAID configuration ({\"logical_disks\": [...]})")
		}
		if err := checkRAIDConfig(cfg); err != nil {
			return err
		}
		n.TargetRAIDConfig = cfg
		return s.createRAID(ctx, t, r, st.Args, true)
	}
	return errInvalidParameter("raid interface has no step %q", st.Step)
}

// createRAID creates target_raid_config's volumes (those the arguments
// keep), deleting the existing ones first when asked, and records
// raid_config.
func (s *Service) createRAID(ctx context.Context, t *Task, r plugins.RAIDInterface, args map[string]any, deleteDefault bool) error {
	n := t.Node
	root, err := boolArg(args, "create_root_volume", true)
	if err != nil {
		return err
	}
	nonRoot, err := boolArg(args, "create_nonroot_volumes", true)
	if err != nil {
		return err
	}
	deleteExisting, err := boolArg(args, "delete_existing", deleteDefault)
	if err != nil {
		return err
	}
	if len(n.TargetRAIDConfig) == 0 {
		return classed("MissingParameterValue", http.StatusBadRequest, nil, "Node %s has no target RAID configuration.", n.UUID)
	}
	if err := checkRAIDConfig(n.TargetRAIDConfig); err != nil {
		return err
	}
	var disks []plugins.LogicalDisk
	for _, it := range n.TargetRAIDConfig["logical_disks"].([]any) {
		d := plugins.LogicalDisk(cloneMap(it.(map[string]any)))
		isRoot, _ := d["is_root_volume"].(bool)
		if (isRoot && root) || (!isRoot && nonRoot) {
			disks = append(disks, d)
		}
	}
	if len(disks) == 0 {
		return classed("MissingParameterValue", http.StatusBadRequest, nil,
			"Node %s has empty target RAID configuration after skipping root volume and/or non-root volumes.", n.UUID)
	}
	sortLogicalDisks(disks)
	if deleteExisting {
		if err := s.driverCall(ctx, n, "delete RAID configuration", func(ctx context.Context, pn plugins.Node) error {
			return r.DeleteRAIDConfiguration(ctx, pn)
		}); err != nil {
			return err
		}
		n.RAIDConfig = map[string]any{}
	}
	var created []plugins.LogicalDisk
	if err := s.driverCall(ctx, n, "create RAID configuration", func(ctx context.Context, pn plugins.Node) (err error) {
		created, err = r.CreateRAIDConfiguration(ctx, pn, disks)
		return err
	}); err != nil {
		return err
	}
	updateRAIDInfo(n, created)
	return nil
}

// sortLogicalDisks puts the root volume first, then sized volumes,
// largest first, then those of size MAX, as Ironic's drivers order them
// (a MAX volume takes what is left).
func sortLogicalDisks(disks []plugins.LogicalDisk) {
	rank := func(d plugins.LogicalDisk) (int, float64) {
		if root, _ := d["is_root_volume"].(bool); root {
			return 0, 0
		}
		if d["size_gb"] == "MAX" {
			return 2, 0
		}
		size, _ := toFloat(d["size_gb"])
		return 1, -size
	}
	slices.SortStableFunc(disks, func(a, b plugins.LogicalDisk) int {
		ra, sa := rank(a)
		rb, sb := rank(b)
		if ra != rb {
			return ra - rb
		}
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return 0
	})
}

func toFloat(v any) (float64, bool) {
	if i, ok := toInt(v); ok {
		return float64(i), true
	}
	f, ok := v.(float64)
	return f, ok
}

// updateRAIDInfo is Ironic's update_raid_info: raid_config records the
// volumes; a root volume sets properties local_gb (unless MAX) and the
// capability raid_level.
func updateRAIDInfo(n *objects.Node, created []plugins.LogicalDisk) {
	list := make([]any, len(created))
	var root plugins.LogicalDisk
	for i, d := range created {
		list[i] = map[string]any(d)
		if isRoot, _ := d["is_root_volume"].(bool); isRoot && root == nil {
			root = d
		}
	}
	n.RAIDConfig = map[string]any{"logical_disks": list, "last_updated": time.Now().UTC().Format("2006-01-02 15:04:05.000000")}
	if root == nil {
		return
	}
	props := cloneMap(n.Properties)
	if size, ok := toFloat(root["size_gb"]); ok {
		props["local_gb"] = int(size)
	}
	level, _ := root["raid_level"].(string)
	props["capabilities"] = updatedCapabilities(props["capabilities"], map[string]string{"raid_level": level})
	n.Properties = props
}

// raidLevels are the raid_level values of Ironic's RAID schema.
var raidLevels = []string{"JBOD", "0", "1", "2", "5", "6", "1+0", "5+0", "6+0"}

// checkRAIDConfig checks what the raid steps rely on in a RAID
// configuration: logical_disks, a non-empty list of objects each with a
// known raid_level and a size_gb (an integer >= 0 or "MAX"), and at most
// one root volume. The REST API checks a target against Ironic's whole
// schema (core/api/raid.go); this guards raid_config arguments of steps.
func checkRAIDConfig(cfg map[string]any) error {
	list, ok := cfg["logical_disks"].([]any)
	if !ok || len(list) == 0 {
		return errInvalidParameter("RAID config validation error: 'logical_disks' must be a non-empty list")
	}
	roots := 0
	for i, it := range list {
		d, ok := it.(map[string]any)
		if !ok {
			return errInvalidParameter("RAID config validation error: logical_disks[%d] is not an object", i)
		}
		if level, _ := d["raid_level"].(string); !slices.Contains(raidLevels, level) {
			return errInvalidParameter("RAID config validation error: logical_disks[%d]: raid_level %v is not one of %s", i, d["raid_level"], strings.Join(raidLevels, ", "))
		}
		if size, ok := toFloat(d["size_gb"]); d["size_gb"] != "MAX" && (!ok || size < 0 || size != float64(int64(size))) {
			return errInvalidParameter("RAID config validation error: logical_disks[%d]: size_gb %v is neither an integer >= 0 nor \"MAX\"", i, d["size_gb"])
		}
		if root, _ := d["is_root_volume"].(bool); root {
			roots++
		}
	}
	if roots > 1 {
		return errInvalidParameter("Raid config cannot have more than one root volume. %d root volumes were specified", roots)
	}
	return nil
}
