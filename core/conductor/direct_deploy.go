package conductor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/conductor/agentclient"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/uptrace/bun"
)

// The direct deploy (Ironic's "direct" deploy interface): the conductor
// boots the node into the ironic-python-agent through the driver's own
// ramdisk boot (virtual media for redfish: driver_info deploy_iso; network
// boot for ipmi: driver_info deploy_kernel and deploy_ramdisk, served as an
// iPXE script by the conductor's boot server; fake-hardware boots nothing:
// a test starts the agent), the agent writes instance_info's image to the
// disk, the conductor sets the node to boot from disk, powers it off and
// on. It runs in the conductor, on the plugin's power, management and
// ramdisk deploy calls, so every plugin that deploys a ramdisk supports it:
// no plugin protocol change.

// driver_info keys naming the agent's boot image, as Ironic names them.
const (
	DeployISOKey     = "deploy_iso"
	DeployKernelKey  = "deploy_kernel"
	DeployRamdiskKey = "deploy_ramdisk"
)

// isDirect reports whether n uses the direct deploy.
func (s *Service) isDirect(n *objects.Node) bool {
	impl, err := s.nodeInterface(n, catalog.Deploy)
	return err == nil && impl == catalog.Direct
}

// agentBootInfo is the instance_info the driver's ramdisk boot gets to
// boot the agent: the ISO of driver_info deploy_iso, or deploy_kernel and
// deploy_ramdisk (with driver_info kernel_append_params).
func agentBootInfo(n *objects.Node) (map[string]any, error) {
	out, ok := ramdiskBootInfo(n, DeployISOKey, DeployKernelKey, DeployRamdiskKey)
	if !ok {
		return nil, fmt.Errorf("driver_info needs %s (virtual media) or %s and %s (network boot) to boot the agent",
			DeployISOKey, DeployKernelKey, DeployRamdiskKey)
	}
	return out, nil
}

// ramdiskBootInfo is the instance_info the driver's ramdisk boot gets from
// driver_info: the ISO of isoKey, or the kernel and ramdisk of kernelKey and
// ramdiskKey (with kernel_append_params), and instance_info boot_mode; ok
// is false when driver_info names neither (fake-hardware needs none).
func ramdiskBootInfo(n *objects.Node, isoKey, kernelKey, ramdiskKey string) (out map[string]any, ok bool) {
	str := func(k string) string { v, _ := n.DriverInfo[k].(string); return strings.TrimSpace(v) }
	out = map[string]any{}
	if mode, ok := n.InstanceInfo["boot_mode"]; ok {
		out["boot_mode"] = mode
	}
	switch {
	case n.Driver == "fake-hardware":
	case str(isoKey) != "":
		out["boot_iso"] = str(isoKey)
	case str(kernelKey) != "" && str(ramdiskKey) != "":
		out["kernel"], out["ramdisk"] = str(kernelKey), str(ramdiskKey)
		if p := str("kernel_append_params"); p != "" {
			out["kernel_append_params"] = p
		}
	default:
		return nil, false
	}
	return out, true
}

// validateDirect checks what the direct deploy needs before a deploy
// starts: how to boot the agent and which image to write.
func validateDirect(n *objects.Node) error {
	if _, err := agentBootInfo(n); err != nil {
		return err
	}
	_, err := imageInfo(n)
	return err
}

// imageInfo builds the agent's image_info from instance_info, as Ironic
// does for a whole-disk image: image_source (an http(s) URL),
// image_checksum ("<algo>:<hex>" or a sha256/sha512 hex digest) or
// image_os_hash_algo + image_os_hash_value, image_disk_format (raw,
// qcow2; raw by default).
func imageInfo(n *objects.Node) (map[string]any, error) {
	ii := n.InstanceInfo
	str := func(k string) string { v, _ := ii[k].(string); return strings.TrimSpace(v) }
	src := str("image_source")
	u, err := url.Parse(src)
	if src == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("instance_info image_source must be an http(s) URL of a whole-disk image")
	}
	format := str("image_disk_format")
	switch format {
	case "":
		format = "raw"
	case "raw", "qcow2":
	default:
		return nil, fmt.Errorf("instance_info image_disk_format %q is not supported: use raw or qcow2", format)
	}
	algo, value := str("image_os_hash_algo"), strings.ToLower(str("image_os_hash_value"))
	if algo == "" && value == "" {
		algo, value, err = parseChecksum(str("image_checksum"))
		if err != nil {
			return nil, err
		}
	}
	switch {
	case algo == "" || value == "":
		return nil, errors.New("instance_info needs image_checksum, or image_os_hash_algo and image_os_hash_value")
	case algo != "sha256" && algo != "sha512":
		return nil, fmt.Errorf("instance_info image_os_hash_algo %q is not supported: use sha256 or sha512", algo)
	}
	return map[string]any{
		"id": n.UUID, "urls": []any{src}, "disk_format": format, "container_format": "bare",
		"stream_raw_images": true, "image_type": "whole-disk",
		"os_hash_algo": algo, "os_hash_value": value, "node_uuid": n.UUID,
	}, nil
}

// parseChecksum reads image_checksum: "<algo>:<hex>" or a bare hex digest
// whose length names the algorithm (64 sha256, 128 sha512). MD5 is not
// accepted, as Ironic's default.
func parseChecksum(c string) (algo, value string, err error) {
	if c == "" {
		return "", "", nil
	}
	if a, v, ok := strings.Cut(c, ":"); ok && !strings.Contains(a, "/") {
		algo, value = strings.ToLower(a), strings.ToLower(v)
	} else {
		value = strings.ToLower(c)
		switch len(value) {
		case 64:
			algo = "sha256"
		case 128:
			algo = "sha512"
		case 32:
			return "", "", errors.New("instance_info image_checksum: MD5 checksums are not accepted; give a sha256 or sha512 digest")
		default:
			return "", "", errors.New("instance_info image_checksum must be a sha256 or sha512 hex digest, or <algorithm>:<digest>")
		}
	}
	for _, r := range value {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return "", "", errors.New("instance_info image_checksum is not a hex digest")
		}
	}
	return algo, value, nil
}

// agentTarget is the node's agent as its heartbeats announced it.
func agentTarget(n *objects.Node) agentclient.Target {
	str := func(k string) string { v, _ := n.DriverInternalInfo[k].(string); return v }
	return agentclient.Target{Node: n.UUID, URL: str("agent_url"), Token: str(agenttoken.Key), VerifyCA: str(agentVerifyCAKey)}
}

// agentNode is the node as the agent's commands get it: what its hardware
// managers read (properties' root_device hints, instance_info), never
// driver_info.
func agentNode(n *objects.Node) map[string]any {
	return map[string]any{"uuid": n.UUID, "properties": n.Properties, "instance_info": n.InstanceInfo,
		"driver_internal_info": map[string]any{}, "extra": map[string]any{}}
}

// agentPorts lists the node's ports as the agent's commands get them.
func (s *Service) agentPorts(ctx context.Context, n *objects.Node) ([]any, error) {
	ports, err := s.store.LoadAll(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", n.ID)
	})
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(ports))
	for _, p := range ports {
		out = append(out, map[string]any{"address": p.(*objects.Port).Address})
	}
	return out, nil
}

// agentDeployStep reports whether name is a step the agent runs (the
// agent's generic hardware manager's deploy steps).
func agentDeployStep(name string) bool {
	switch name {
	case "write_image", "erase_devices_metadata", "apply_configuration", "inject_files", "clean_uefi_nvram":
		return true
	}
	return false
}

// stepBootAgent is the deploy step "deploy": boot the agent through the
// driver and wait for its heartbeat.
func (s *Service) stepBootAgent(ctx context.Context, t *Task, _ DeployStep) (stepResult, error) {
	info, err := agentBootInfo(t.Node)
	if err != nil {
		return 0, err
	}
	err = s.withHardware(ctx, t, "boot the agent", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		pn.InstanceInfo = info
		if err := hw.PrepareDeploy(ctx, pn); err != nil {
			return err
		}
		return hw.Deploy(ctx, pn)
	})
	if err != nil {
		return 0, err
	}
	return stepWait, nil
}

// stepWriteImage is the deploy step "write_image": the agent writes the
// image (and the config drive) to the root device.
func (s *Service) stepWriteImage(ctx context.Context, t *Task, st DeployStep) (stepResult, error) {
	img, err := imageInfo(t.Node)
	if err != nil {
		return 0, err
	}
	args := cloneMap(st.Args)
	args["image_info"] = img
	if cd, err := s.configDrive(t.Node); err != nil {
		return 0, err
	} else if cd != "" {
		args["configdrive"] = cd
	}
	st.Args = args
	return s.stepOnAgent(ctx, t, st)
}

// stepOnAgent runs a deploy step on the agent (deploy.execute_deploy_step):
// a step that finished at once is done; one that runs makes the deploy
// wait for the agent's heartbeat.
func (s *Service) stepOnAgent(ctx context.Context, t *Task, st DeployStep) (stepResult, error) {
	ports, err := s.agentPorts(ctx, t.Node)
	if err != nil {
		return 0, err
	}
	const cmd = "deploy.execute_deploy_step"
	res, err := s.agent.Execute(ctx, agentTarget(t.Node), cmd,
		map[string]any{"step": st.asMap(), "node": agentNode(t.Node), "ports": ports}, false)
	if err != nil {
		return 0, err
	}
	if res.Status != agentclient.StatusRunning {
		return stepDone, nil
	}
	dii := cloneMap(t.Node.DriverInternalInfo)
	dii[diiAgentCommand] = cmd
	t.Node.DriverInternalInfo = dii
	return stepWait, nil
}

// stepPrepareInstanceBoot is "prepare_instance_boot": boot from the disk
// from now on.
func (s *Service) stepPrepareInstanceBoot(ctx context.Context, t *Task, _ DeployStep) (stepResult, error) {
	return stepDone, s.withHardware(ctx, t, "set boot device disk", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		err := hw.SetBootDevice(ctx, pn, plugins.BootDeviceSetting{Device: plugins.BootDisk, Persistent: true, Mode: BootModeOf(t.Node)})
		if errors.Is(err, plugins.ErrNotSupported) {
			return nil // a driver that cannot set it boots what its firmware says
		}
		return err
	})
}

// stepTearDownAgent is "tear_down_agent": power the node off (the agent
// is done), and take its boot media away.
func (s *Service) stepTearDownAgent(ctx context.Context, t *Task, _ DeployStep) (stepResult, error) {
	return stepDone, s.withHardware(ctx, t, "power off the agent", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		return hw.SetPowerState(ctx, pn, plugins.PowerOff)
	})
}

// stepBootInstance is "boot_instance": power on, into the written disk.
func (s *Service) stepBootInstance(ctx context.Context, t *Task, _ DeployStep) (stepResult, error) {
	return stepDone, s.withHardware(ctx, t, "power on the instance", func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		return hw.SetPowerState(ctx, pn, plugins.PowerOn)
	})
}

// withHardware runs fn with the node's driver, without recording a
// failure (the engine does).
func (s *Service) withHardware(ctx context.Context, t *Task, op string, fn func(ctx context.Context, hw Hardware, pn plugins.Node) error) error {
	hw, err := s.hardware(t.Node)
	if err != nil {
		return err
	}
	return s.driverCall(ctx, t.Node, op, func(ctx context.Context, pn plugins.Node) error { return fn(ctx, hw, pn) })
}
