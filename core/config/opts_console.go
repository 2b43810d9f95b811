package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ConsoleOpts holds the [console] section (Ironic's options of the same
// names): where the conductor's serial consoles listen.
type ConsoleOpts struct {
	PortRange    string
	SocatAddress string
}

// ParsePortRange parses "low:high" (both 1–65535, low <= high).
func ParsePortRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if ok {
		lo, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			hi, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("%q is not a port range: write low:high, for example 10000:20000 (1 <= low <= high <= 65535)", s)
	}
	return lo, hi, nil
}

func consoleSection() section {
	return section{name: "console", help: "Serial consoles the conductor serves (console interface ipmi-socat).", options: []*Option{
		strOpt("port_range", "10000:20000", func(c *Config) *string { return &c.Console.PortRange },
			"TCP ports (low:high) the conductor's serial consoles listen on, one per node with its console enabled.").
			check(func(v any) string {
				if _, _, err := ParsePortRange(v.(string)); err != nil {
					return err.Error()
				}
				return ""
			}),
		strOpt("socat_address", "127.0.0.1", func(c *Config) *string { return &c.Console.SocatAddress },
			"IP address the serial consoles listen on and that console_info URLs name. A console endpoint "+
				"carries the node's serial line unauthenticated, so the default is loopback: reach it through "+
				"SSH port forwarding to the conductor's host (see docs/admin/console.md). Set a routable "+
				"address only on a network where whoever can connect may use the node's console.").
			check(func(v any) string {
				if net.ParseIP(strings.TrimSpace(v.(string))) == nil {
					return fmt.Sprintf("%q is not an IP address", v)
				}
				return ""
			}),
	}}
}
