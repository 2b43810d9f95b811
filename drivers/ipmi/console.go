package ipmi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/bougou/go-ipmi/pkg/command/transport"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

// ConsoleName is the console interface this driver serves: a raw TCP
// serial console bridged to the BMC's Serial-over-LAN payload, the Go
// counterpart of Ironic's ipmitool-socat (console_info type "socat").
const ConsoleName = "ipmi-socat"

// solInstance is the SOL payload instance used, as ipmitool's default.
const solInstance = 1

// solConsole is one node's serial console: a TCP listener and, while a
// client is connected, one SOL session bridging it to the BMC. One client
// at a time: a BMC has a single SOL payload instance per serial port, so
// a second client is told so and disconnected.
type solConsole struct {
	ln     net.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	client net.Conn // the connected client, nil when none
}

// consoles holds the running consoles by node UUID.
type consoles struct {
	mu  sync.Mutex
	run map[string]*solConsole
}

// StartConsole implements plugins.ConsoleInterface: it listens on ep and
// bridges each TCP client to the node's SOL payload. A console already
// running for the node is stopped first.
func (d *Driver) StartConsole(ctx context.Context, node plugins.Node, ep plugins.ConsoleEndpoint) (plugins.ConsoleInfo, error) {
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return plugins.ConsoleInfo{}, fmt.Errorf("ipmi: start console: %w", err)
	}
	if err := d.StopConsole(ctx, node); err != nil {
		return plugins.ConsoleInfo{}, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", ep.HostPort())
	if err != nil {
		return plugins.ConsoleInfo{}, fmt.Errorf("ipmi: start console: cannot listen on %s (check [console] socat_address and port_range): %w", ep.HostPort(), err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &solConsole{ln: ln, cancel: cancel}
	d.consoles.mu.Lock()
	if d.consoles.run == nil {
		d.consoles.run = map[string]*solConsole{}
	}
	d.consoles.run[node.UUID] = c
	d.consoles.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		d.serveConsole(cctx, c, p, node.UUID)
	}()
	d.log.Info("serial console started", "node", node.UUID, "listen", ln.Addr().String(), "bmc", p.addr())
	return plugins.ConsoleInfo{Type: plugins.ConsoleSocat, URL: "tcp://" + ln.Addr().String()}, nil
}

// StopConsole implements plugins.ConsoleInterface: it closes the listener
// and the connected client, whose SOL payload is deactivated.
func (d *Driver) StopConsole(_ context.Context, node plugins.Node) error {
	d.consoles.mu.Lock()
	c := d.consoles.run[node.UUID]
	delete(d.consoles.run, node.UUID)
	d.consoles.mu.Unlock()
	if c == nil {
		return nil
	}
	c.stop()
	d.log.Info("serial console stopped", "node", node.UUID)
	return nil
}

// stopConsoles stops every console (Close).
func (d *Driver) stopConsoles() {
	d.consoles.mu.Lock()
	run := d.consoles.run
	d.consoles.run = nil
	d.consoles.mu.Unlock()
	for _, c := range run {
		c.stop()
	}
}

func (c *solConsole) stop() {
	c.cancel()
	_ = c.ln.Close()
	c.mu.Lock()
	if c.client != nil {
		_ = c.client.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// serveConsole accepts clients until the listener closes.
func (d *Driver) serveConsole(ctx context.Context, c *solConsole, p params, uuid string) {
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		busy := c.client != nil
		if !busy {
			c.client = conn
		}
		c.mu.Unlock()
		if busy {
			_, _ = io.WriteString(conn, "rivet: this node's serial console already has a client; only one at a time is possible\r\n")
			_ = conn.Close()
			continue
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			err := d.bridgeSOL(ctx, conn, p)
			if err != nil && ctx.Err() == nil {
				d.log.Warn("serial console session ended", "node", uuid, "bmc", p.addr(), "error", err)
				_, _ = io.WriteString(conn, "\r\nrivet: "+err.Error()+"\r\n")
			}
			_ = conn.Close()
			c.mu.Lock()
			c.client = nil
			c.mu.Unlock()
		}()
	}
}

// bridgeSOL opens an RMCP+ session of its own (SOL runs beside the
// driver's command session, which stays free for power and boot calls),
// activates the SOL payload and exchanges bytes with conn until conn or
// the BMC ends it. A payload left active by an earlier client (ipmitool's
// "SOL payload already active") is deactivated and activated again.
func (d *Driver) bridgeSOL(ctx context.Context, conn net.Conn, p params) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := newSession()
	if err := s.connect(ctx, p, d.dial); err != nil {
		return scrub(fmt.Errorf("cannot open a session with the BMC at %s: %w", p.addr(), err), p.password)
	}
	defer s.drop(true)
	cl := s.client
	activate := func() error {
		return shielded(func() error {
			_, err := cl.ActivatePayload(ctx, &transport.ActivatePayloadRequest{PayloadType: types.PayloadTypeSOL, PayloadInstance: solInstance})
			return err
		})
	}
	deactivate := func(ctx context.Context) {
		_ = shielded(func() error {
			_, err := cl.DeactivatePayload(ctx, &transport.DeactivatePayloadRequest{PayloadType: types.PayloadTypeSOL, PayloadInstance: solInstance})
			return err
		})
	}
	if err := activate(); err != nil {
		deactivate(ctx)
		if err2 := activate(); err2 != nil {
			return scrub(fmt.Errorf("the BMC at %s refused to activate Serial-over-LAN: %w", p.addr(), err2), p.password)
		}
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), p.timeout)
		defer dcancel()
		deactivate(dctx)
	}()
	err := shielded(func() error { return cl.SOLStream(ctx, conn, conn, nil) })
	if err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return scrub(fmt.Errorf("Serial-over-LAN with the BMC at %s: %w", p.addr(), err), p.password)
}
