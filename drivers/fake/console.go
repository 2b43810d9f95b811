package fake

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/rivetmetal/rivet/plugins"
)

// fakeConsole is a fake node's serial console: a TCP listener whose
// clients are greeted and get back what they type, as if the node's serial
// line were looped back. It lets the console API be used end to end with
// fake-hardware.
type fakeConsole struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// StartConsole implements plugins.ConsoleInterface (console_info type
// "socat"). A console already running for the node is restarted on ep.
func (d *Driver) StartConsole(ctx context.Context, node plugins.Node, ep plugins.ConsoleEndpoint) (plugins.ConsoleInfo, error) {
	_ = d.StopConsole(ctx, node)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", ep.HostPort())
	if err != nil {
		return plugins.ConsoleInfo{}, fmt.Errorf("fake: start console: cannot listen on %s: %w", ep.HostPort(), err)
	}
	c := &fakeConsole{ln: ln, conns: map[net.Conn]bool{}}
	d.mu.Lock()
	if d.consoles == nil {
		d.consoles = map[string]*fakeConsole{}
	}
	d.consoles[node.UUID] = c
	d.mu.Unlock()
	c.wg.Add(1)
	go c.serve(node.UUID)
	return plugins.ConsoleInfo{Type: plugins.ConsoleSocat, URL: "tcp://" + ln.Addr().String()}, nil
}

// StopConsole implements plugins.ConsoleInterface.
func (d *Driver) StopConsole(_ context.Context, node plugins.Node) error {
	d.mu.Lock()
	c := d.consoles[node.UUID]
	delete(d.consoles, node.UUID)
	d.mu.Unlock()
	if c != nil {
		c.stop()
	}
	return nil
}

// Close stops every console (plugins.Closer: Serve calls it on shutdown).
func (d *Driver) Close(context.Context) error {
	d.mu.Lock()
	all := d.consoles
	d.consoles = nil
	d.mu.Unlock()
	for _, c := range all {
		c.stop()
	}
	return nil
}

func (c *fakeConsole) serve(uuid string) {
	defer c.wg.Done()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		c.conns[conn] = true
		c.mu.Unlock()
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer func() {
				c.mu.Lock()
				delete(c.conns, conn)
				c.mu.Unlock()
				_ = conn.Close()
			}()
			if _, err := fmt.Fprintf(conn, "fake node %s serial console\r\n", uuid); err != nil {
				return
			}
			r := bufio.NewReader(conn)
			buf := make([]byte, 256)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					if _, werr := conn.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func (c *fakeConsole) stop() {
	_ = c.ln.Close()
	c.mu.Lock()
	for conn := range c.conns {
		_ = conn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}
