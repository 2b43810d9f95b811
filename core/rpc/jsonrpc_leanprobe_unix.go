//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package rpc

import (
	"net"
	"syscall"
)

// leanConnAlive says whether an idle connection can take a request: the
// server has not closed or reset it and has sent nothing unasked. net/http
// learns this from the reader goroutine each of its connections keeps;
// the lean client has none, so it asks the socket, without blocking,
// before it reuses one (a peek: nothing is consumed).
func leanConnAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	// Control, not Read: the peek must neither wait nor meet the deadline
	// the connection's last call left on it.
	err = rc.Control(func(fd uintptr) {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// EAGAIN: nothing to read, the connection is open and quiet.
		// No error: end of stream, or bytes nobody asked for; any other
		// error (a reset): unusable too.
		alive = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
	})
	return err == nil && alive
}
