package httplimit

import (
	"net"

	"golang.org/x/net/netutil"
)

// Listener returns ln accepting at most max connections at once: beyond
// that, Accept waits for one to close and new clients wait in the kernel's
// accept queue. Idle keep-alive connections count until IdleTimeout closes
// them. max <= 0 returns ln unchanged.
func Listener(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return netutil.LimitListener(ln, max)
}
