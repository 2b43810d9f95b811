package bootserver

import (
	"context"
	"errors"
	"net"
	"strings"
)

// ErrNotFound is what a Source returns (possibly wrapped) when no node
// matches; the handler answers 404.
var ErrNotFound = errors.New("bootserver: no such node")

// Node is the part of a node a boot script is built from.
type Node struct {
	// UUID identifies the node in logs and in the script's comment.
	UUID string
	// ProvisionState decides whether the node boots its deploy image.
	ProvisionState string
	// InstanceInfo holds the image keys; only those are ever read.
	InstanceInfo map[string]any
}

// Source reads nodes for the boot server. It must not write: scripts are
// served to any caller without a lease.
type Source interface {
	// NodeByUUID returns the node with that UUID (lower case), or an
	// error wrapping ErrNotFound.
	NodeByUUID(ctx context.Context, uuid string) (Node, error)
	// NodeByMAC returns the node owning the port with that MAC address
	// (lower case, colon-separated, as ports are stored), or an error
	// wrapping ErrNotFound.
	NodeByMAC(ctx context.Context, mac string) (Node, error)
}

// identKind is how an ident in the path names a node.
type identKind int

const (
	identInvalid identKind = iota
	identUUID
	identMAC
)

// parseIdent recognises a node UUID (8-4-4-4-12 hex) or a 6-byte MAC
// address in any form iPXE prints one (${net0/mac} "52:54:00:12:34:56",
// :hexhyp "52-54-00-12-34-56", :hexraw "525400123456") and returns it in
// the form the database stores.
func parseIdent(s string) (identKind, string) {
	if isUUID(s) {
		return identUUID, strings.ToLower(s)
	}
	if len(s) == 12 && isHex(s) {
		var b strings.Builder
		for i := 0; i < 12; i += 2 {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(s[i : i+2])
		}
		s = b.String()
	}
	if hw, err := net.ParseMAC(s); err == nil && len(hw) == 6 {
		return identMAC, strings.ToLower(hw.String())
	}
	return identInvalid, ""
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i : i+1]) {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
