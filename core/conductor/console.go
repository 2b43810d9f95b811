package conductor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// Node driver_internal_info keys of an enabled console: what
// get_console_information answers (console_info, as the driver returned
// it) and the port this conductor allocated for it. Both are rewritten by
// the conductor that (re)starts the console, so after a takeover they name
// the new conductor's endpoint.
const (
	keyConsoleInfo = "console_info"
	keyConsolePort = "allocated_console_port"
)

// keyTerminalPort is Ironic's driver_info key fixing a node's console port
// (ipmi_terminal_port); without it a port of [console] port_range is used.
const keyTerminalPort = "ipmi_terminal_port"

// ConsoleConfig is the [console] section.
type ConsoleConfig struct {
	// Address is socat_address: where serial consoles listen.
	Address string
	// PortLow and PortHigh bound port_range (0: 10000:20000).
	PortLow, PortHigh int
}

func (c ConsoleConfig) withDefaults() ConsoleConfig {
	if c.Address == "" {
		c.Address = "127.0.0.1"
	}
	if c.PortLow == 0 || c.PortHigh < c.PortLow {
		c.PortLow, c.PortHigh = 10000, 20000
	}
	return c
}

// consoles tracks the consoles this conductor started: node UUID → port,
// and the plugin process that serves each (a restarted plugin has lost
// them).
type consoles struct {
	mu    sync.Mutex
	ports map[string]int
	by    map[string]string // node UUID → pluginInstance when started
}

// pluginInstance names the plugin process serving hw ("" for an
// in-process driver, or a plugin not running).
func pluginInstance(hw any) string {
	r, ok := hw.(interface {
		Registration() (host.Registration, bool)
	})
	if !ok {
		return ""
	}
	reg, running := r.Registration()
	if !running {
		return ""
	}
	return fmt.Sprintf("%d@%s", reg.PID, reg.StartedAt.Format(time.RFC3339Nano))
}

func (c *consoles) startedBy(uuid, instance string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]string{}
	}
	c.by[uuid] = instance
}

// allocate picks a port for uuid: the node's own (ipmi_terminal_port) or
// the first of the range neither another console of this conductor holds
// nor anything else on the host listens on.
func (c *consoles) allocate(cfg ConsoleConfig, uuid string, fixed int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ports == nil {
		c.ports = map[string]int{}
	}
	taken := map[int]bool{}
	for u, p := range c.ports {
		if u != uuid {
			taken[p] = true
		}
	}
	if fixed > 0 {
		if taken[fixed] {
			return 0, fmt.Errorf("port %d of driver_info %s is already used by another node's console", fixed, keyTerminalPort)
		}
		c.ports[uuid] = fixed
		return fixed, nil
	}
	if p, ok := c.ports[uuid]; ok {
		return p, nil
	}
	for p := cfg.PortLow; p <= cfg.PortHigh; p++ {
		if taken[p] || !bindable(cfg.Address, p) {
			continue
		}
		c.ports[uuid] = p
		return p, nil
	}
	return 0, fmt.Errorf("no free port in [console] port_range %d:%d on %s", cfg.PortLow, cfg.PortHigh, cfg.Address)
}

func (c *consoles) release(uuid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.ports, uuid)
	delete(c.by, uuid)
}

// running reports whether uuid's console was started here by the plugin
// process that is instance now.
func (c *consoles) running(uuid, instance string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ports[uuid]
	return ok && c.by[uuid] == instance
}

func (c *consoles) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.ports))
	for u := range c.ports {
		out = append(out, u)
	}
	return out
}

// bindable reports whether nothing listens on addr:port now.
func bindable(addr string, port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// errConsoleNotEnabled is Ironic's NodeConsoleNotEnabled.
func errConsoleNotEnabled(uuid string) *Error {
	return classed("NodeConsoleNotEnabled", http.StatusBadRequest, nil, "Console access is not enabled on node %s", uuid)
}

// consoleDriver returns the console interface of n's driver, or Ironic's
// UnsupportedDriverExtension (400) when the node's console_interface does
// nothing (no-console) or its plugin lacks the console interface (an older
// plugin, or one connected with protocol 1).
func (s *Service) consoleDriver(n *objects.Node) (plugins.ConsoleInterface, error) {
	hw, err := s.hardware(n)
	if err != nil {
		return nil, err
	}
	if err := s.requireInterface(n, catalog.Console); err != nil {
		return nil, err
	}
	c, ok := hw.(plugins.ConsoleInterface)
	if !ok || !slices.Contains(s.drivers.Interfaces(n.Driver), plugins.InterfaceConsole) {
		return nil, classed("UnsupportedDriverExtension", http.StatusBadRequest, plugins.ErrNotSupported,
			"Driver %s does not support console: its plugin does not serve the console interface (console interface version 1, plugin protocol 2); upgrade the plugin or set console_interface to no-console.", n.Driver)
	}
	return c, nil
}

// setConsoleMode serves set_console_mode (RPC 1.5, Ironic's): it checks
// the node's console interface at once (400 when it has none) and, when
// the wanted state differs from console_enabled, starts or stops the
// console in the background under the node's lease; the API answers 202.
// Asking for the state the node is in does nothing, as in Ironic.
func (s *Service) setConsoleMode(ctx context.Context, p rpc.Params) (any, error) {
	var enabled bool
	if err := p.Decode("enabled", &enabled); err != nil {
		return nil, err
	}
	t, err := s.acquireParam(ctx, p, "setting console mode")
	if err != nil {
		return nil, err
	}
	n := t.Node
	con, err := s.consoleDriver(n)
	if err != nil {
		t.Release(ctx)
		return nil, err
	}
	if enabled == n.ConsoleEnabled {
		t.Release(ctx)
		s.nodeLog(ctx, n).Info("no console action: the console is already in the state asked", "enabled", enabled)
		return nil, nil
	}
	prepare := func() error {
		n.LastError = nil
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) {
		op := "disabling"
		if enabled {
			op = "enabling"
		}
		if err := s.switchConsole(ctx, t.Node, con, enabled); err != nil {
			msg := fmt.Sprintf("Error %s the console on node %s. Reason: %s", op, t.Node.UUID, err)
			t.Node.LastError = &msg
			s.nodeLog(ctx, t.Node).Error("console", "error", msg)
		} else {
			t.Node.ConsoleEnabled = enabled
			t.Node.LastError = nil
		}
		if err := t.Save(ctx); err != nil {
			s.nodeLog(ctx, t.Node).Error("saving the console state failed", "error", err)
		}
	})
}

// switchConsole starts or stops n's console through its driver and keeps
// console_info and the allocated port in driver_internal_info (not saved).
func (s *Service) switchConsole(ctx context.Context, n *objects.Node, con plugins.ConsoleInterface, enabled bool) error {
	if !enabled {
		err := s.driverCall(ctx, n, "stop console", func(ctx context.Context, pn plugins.Node) error {
			return con.StopConsole(ctx, pn)
		})
		if err != nil {
			return err
		}
		s.consoles.release(n.UUID)
		n.DriverInternalInfo = withoutConsoleKeys(n.DriverInternalInfo)
		return nil
	}
	cfg := s.cfg.Console.withDefaults()
	fixed, err := terminalPort(n)
	if err != nil {
		return err
	}
	port, err := s.consoles.allocate(cfg, n.UUID, fixed)
	if err != nil {
		return err
	}
	var info plugins.ConsoleInfo
	err = s.driverCall(ctx, n, "start console", func(ctx context.Context, pn plugins.Node) (err error) {
		info, err = con.StartConsole(ctx, pn, plugins.ConsoleEndpoint{Address: cfg.Address, Port: port})
		return err
	})
	if err != nil {
		s.consoles.release(n.UUID)
		return err
	}
	if hw, err := s.hardware(n); err == nil {
		s.consoles.startedBy(n.UUID, pluginInstance(hw))
	}
	dii := withoutConsoleKeys(n.DriverInternalInfo)
	dii[keyConsoleInfo] = map[string]any{"type": info.Type, "url": info.URL}
	dii[keyConsolePort] = port
	n.DriverInternalInfo = dii
	return nil
}

func withoutConsoleKeys(m map[string]any) map[string]any {
	out := cloneMap(m)
	delete(out, keyConsoleInfo)
	delete(out, keyConsolePort)
	return out
}

// terminalPort reads driver_info ipmi_terminal_port (0 when unset).
func terminalPort(n *objects.Node) (int, error) {
	v, ok := n.DriverInfo[keyTerminalPort]
	if !ok || v == nil || v == "" {
		return 0, nil
	}
	var port int
	switch x := v.(type) {
	case float64:
		port = int(x)
		if float64(port) != x {
			port = -1
		}
	case int:
		port = x
	case int64:
		port = int(x)
	case string:
		p, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			port = -1
		} else {
			port = p
		}
	default:
		port = -1
	}
	if port < 1 || port > 65535 {
		return 0, errInvalidParameter("driver_info %s must be a TCP port (1-65535)", keyTerminalPort)
	}
	return port, nil
}

// getConsoleInformation serves get_console_information (RPC 1.5): the
// console_info of an enabled console; NodeConsoleNotEnabled otherwise
// (the API answers console_enabled false), UnsupportedDriverExtension for
// a node without a console interface.
func (s *Service) getConsoleInformation(ctx context.Context, p rpc.Params) (any, error) {
	id, err := nodeID(p)
	if err != nil {
		return nil, err
	}
	n, err := s.tasks.Shared(ctx, id)
	if err != nil {
		return nil, err
	}
	if !n.ConsoleEnabled {
		return nil, errConsoleNotEnabled(n.UUID)
	}
	if _, err := s.consoleDriver(n); err != nil {
		return nil, err
	}
	info, _ := n.DriverInternalInfo[keyConsoleInfo].(map[string]any)
	if info == nil {
		// Enabled, but its conductor has not (re)started it yet (a
		// takeover in progress).
		return nil, classed("NodeConsoleNotEnabled", http.StatusBadRequest, nil,
			"Console of node %s is enabled but not running yet: its conductor restarts it within [conductor] check_provision_state_interval", n.UUID)
	}
	return info, nil
}

// syncConsoles is Ironic's _start_consoles, run at start and with the
// takeover periodic: every node with console_enabled that the hash ring
// maps to this conductor and whose console does not run here is started
// here (after a takeover, a conductor restart, a ring change, or a restart
// of the plugin process that served it), under
// the node's lease; a start that fails sets console_enabled false with
// last_error, as Ironic does. A console running here for a node the ring
// now maps elsewhere, or whose console was disabled, is stopped here.
// It returns how many consoles it started.
func (s *Service) syncConsoles(ctx context.Context) int {
	if s.draining.Load() {
		return 0
	}
	if err := s.router.Refresh(ctx); err != nil {
		s.log.Error("console check: hash ring refresh failed", "error", err)
		return 0
	}
	rows, err := s.db.ConsoleEnabledNodes(ctx, strings.ToLower(s.cfg.Group), s.drivers.HardwareTypes())
	if err != nil {
		s.log.Error("console check: listing nodes failed", "error", err)
		return 0
	}
	mine := map[string]bool{}
	started := 0
	for _, row := range rows {
		if ctx.Err() != nil || s.draining.Load() {
			return started
		}
		host, err := s.router.HostFor(ctx, rpc.Target{UUID: row.UUID, Driver: row.Driver, Group: row.ConductorGroup})
		if err != nil || host != s.cfg.Hostname {
			continue
		}
		mine[row.UUID] = true
		hw, err := s.drivers.Hardware(row.Driver)
		if err != nil || s.consoles.running(row.UUID, pluginInstance(hw)) || s.tasks.Holds(row.UUID) {
			continue
		}
		if s.restartConsole(ctx, row.UUID) {
			started++
		}
	}
	for _, uuid := range s.consoles.list() {
		if !mine[uuid] && !s.tasks.Holds(uuid) {
			s.stopLocalConsole(ctx, uuid)
		}
	}
	return started
}

// restartConsole starts uuid's console here under its lease.
func (s *Service) restartConsole(ctx context.Context, uuid string) bool {
	log := s.log.With("node", uuid, "periodic", "console")
	t, err := s.tasks.TryAcquire(ctx, uuid, "start console")
	var locked *db.NodeLockedError
	if errors.As(err, &locked) || errors.Is(err, db.ErrNotFound) {
		return false
	}
	if err != nil {
		log.Error("console: taking the lease failed", "error", err)
		return false
	}
	defer t.Release(ctx)
	n := t.Node
	if !n.ConsoleEnabled {
		return false
	}
	con, err := s.consoleDriver(n)
	if err == nil {
		err = s.switchConsole(ctx, n, con, true)
	}
	if err != nil {
		msg := fmt.Sprintf("Failed to start console of node %s on conductor %s, so changing the console_enabled status to False, error: %s",
			n.UUID, s.cfg.Hostname, err)
		log.Error(msg)
		n.ConsoleEnabled = false
		n.LastError = &msg
		n.DriverInternalInfo = withoutConsoleKeys(n.DriverInternalInfo)
	} else {
		log.Info("console started on this conductor", "url", n.DriverInternalInfo[keyConsoleInfo])
	}
	if err := t.Save(ctx); err != nil {
		log.Error("console: saving the node failed", "error", err)
		return false
	}
	return n.ConsoleEnabled
}

// stopLocalConsole stops a console this conductor runs for a node that is
// no longer its own, leaving the node's fields to its new conductor.
func (s *Service) stopLocalConsole(ctx context.Context, uuid string) {
	defer s.consoles.release(uuid)
	n, err := s.tasks.Shared(ctx, uuid)
	if err != nil {
		return
	}
	hw, err := s.hardware(n)
	if err != nil {
		return
	}
	if con, ok := hw.(plugins.ConsoleInterface); ok {
		if err := s.driverCall(ctx, n, "stop console", func(ctx context.Context, pn plugins.Node) error {
			return con.StopConsole(ctx, pn)
		}); err != nil {
			s.log.Warn("console: stopping a console no longer ours failed", "node", uuid, "error", err)
		}
	}
}
