package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/transport"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// instance is one running plugin process. It is never restarted: a crash or
// a swap retires it and a new instance takes its place.
type instance struct {
	client   *plugin.Client
	driver   *Client
	reg      Registration
	inflight sync.WaitGroup
}

// startInstance starts src, negotiates the protocol (go-plugin) and the
// interface versions (Info, Configure), and returns the running instance.
func startInstance(ctx context.Context, cfg Config, src Source) (*instance, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	log := cfg.Logger.With("driver", src.Driver)

	cmd := exec.Command(src.Path, src.Args...)
	cmd.Env = src.Env // go-plugin adds the host's environment
	cc := &plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: pluginSets(cfg.Protocols),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           newHCLog(log),
		StartTimeout:     cfg.StartTimeout,
		GRPCDialOptions:  transport.DialOptions(),
	}
	if src.Checksum != nil {
		cc.SecureConfig = &plugin.SecureConfig{Checksum: src.Checksum, Hash: sha256.New()}
	}
	started := time.Now()
	client := plugin.NewClient(cc)
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		if strings.Contains(err.Error(), "incompatible API version") {
			return nil, &IncompatibleError{Driver: src.Driver, Host: cfg.Protocols, Plugin: pluginProtocols(ctx, src, err)}
		}
		return nil, fmt.Errorf("driver %s: start %s: %w", src.Driver, src.Path, err)
	}
	raw, err := rpc.Dispense(wire.PluginName)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("driver %s: dispense: %w", src.Driver, err)
	}
	pc, ok := raw.(*Client)
	if !ok {
		client.Kill()
		return nil, fmt.Errorf("driver %s: dispense: unexpected type %T", src.Driver, raw)
	}
	info, err := pc.Info(ctx)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("driver %s: info: %w", src.Driver, err)
	}
	// Only the interface versions the negotiated protocol carries count:
	// power 2 needs protocol 2, so a protocol 1 plugin runs power 1.
	protocol := client.NegotiatedVersion()
	ifaces, dropped, err := negotiateInterfaces(src.Driver, plugins.InterfaceVersionsFor(protocol, cfg.Interfaces), info)
	if err != nil {
		client.Kill()
		return nil, err
	}
	for _, d := range dropped {
		log.Warn("interface not negotiated; it will not be called", "error", d)
	}
	neg := plugins.Negotiation{Protocol: protocol, Interfaces: ifaces, HostVersion: cfg.HostVersion}
	if err := pc.Configure(ctx, neg); err != nil {
		client.Kill()
		return nil, fmt.Errorf("driver %s: configure: %w", src.Driver, err)
	}
	inst := &instance{client: client, driver: pc, reg: Registration{
		Driver:        src.Driver,
		Path:          src.Path,
		BuiltIn:       src.BuiltIn,
		Pinned:        src.Checksum != nil,
		PluginName:    info.Name,
		PluginVersion: info.Version,
		Protocol:      neg.Protocol,
		HardwareTypes: info.HardwareTypes,
		Interfaces:    ifaces,
		Capabilities:  info.Capabilities,
		StartedAt:     started,
	}}
	if rc := client.ReattachConfig(); rc != nil {
		inst.reg.PID = rc.Pid
	}
	log.Info("driver plugin started", "plugin", info.Name, "version", info.Version, "pid", inst.reg.PID,
		"protocol", neg.Protocol, "interfaces", ifaces, "capabilities", info.Capabilities,
		"hardware_types", info.HardwareTypes, "took", time.Since(started).Round(time.Millisecond))
	return inst, nil
}

var pluginVersionRE = regexp.MustCompile(`Plugin version: (\d+)`)

// pluginProtocols finds out which protocol majors a refused plugin speaks:
// it runs the binary in describe mode (wire.DescribeEnv); a plugin not
// built with the SDK falls back to the one version go-plugin reported.
func pluginProtocols(ctx context.Context, src Source, startErr error) []int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, src.Path, src.Args...)
	cmd.Env = append(append(os.Environ(), src.Env...), wire.DescribeEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err == nil {
		var info plugins.Info
		if json.Unmarshal(out.Bytes(), &info) == nil && len(info.ProtocolVersions) > 0 {
			return info.ProtocolVersions
		}
	}
	if m := pluginVersionRE.FindStringSubmatch(startErr.Error()); m != nil {
		if v, err := strconv.Atoi(m[1]); err == nil {
			return []int{v}
		}
	}
	return nil
}
