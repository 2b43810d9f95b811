//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package rpc

import (
	"net"
	"syscall"
)

// leanProbe says whether an idle connection can take a request: the
// server has not closed or reset it and has sent nothing unasked. net/http
// learns this from the reader goroutine each of its connections keeps;
// the lean client has none, so it asks the socket, without blocking,
// before it reuses one (a peek: nothing is consumed).
type leanProbe struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) // peek, bound once
	ok    bool
	bytes [1]byte
}

func (p *leanProbe) init(c net.Conn) {
	if sc, ok := c.(syscall.Conn); ok {
		p.rc, _ = sc.SyscallConn()
	}
	p.fn = p.peek
}

func (p *leanProbe) peek(fd uintptr) {
	_, _, err := syscall.Recvfrom(int(fd), p.bytes[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	// EAGAIN: nothing to read, the connection is open and quiet. No
	// error: end of stream, or bytes nobody asked for; any other error
	// (a reset): unusable too.
	p.ok = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}

func (p *leanProbe) alive() bool {
	if p.rc == nil {
		return true
	}
	p.ok = false
	// Control, not Read: the peek must neither wait nor meet the deadline
	// the connection's last call left on it.
	return p.rc.Control(p.fn) == nil && p.ok
}
