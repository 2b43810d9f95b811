package api

import (
	"regexp"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

var (
	hostLabelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	unreservRE  = regexp.MustCompile(`^[A-Za-z0-9\-._~]+$`)
	macRE       = regexp.MustCompile(`^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$`)
)

// isUUID reports whether s has the UUID form Ironic treats as a UUID
// (8-4-4-4-12 hex digits, either case). Every request naming a node asks,
// and a regular expression was 1.5% of a GET's CPU.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// validLogicalName is Ironic's is_valid_logical_name: from 1.10 any
// RFC 3986 unreserved characters, before that a lowercase hostname.
func validLogicalName(name string, v version.Version) bool {
	if v.AtLeast(v1_10) {
		return len(name) <= 255 && unreservRE.MatchString(name)
	}
	if name == "" || len(name) > 255 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if !hostLabelRE.MatchString(label) {
			return false
		}
	}
	return true
}

// validNodeName is a logical name that is not a UUID.
func validNodeName(name string, v version.Version) bool {
	return validLogicalName(name, v) && !isUUID(name)
}

// normalizeMAC validates a MAC address and returns it lowercased with
// colons, as Ironic stores it; ok is false for anything else.
func normalizeMAC(s string) (string, bool) {
	if !macRE.MatchString(s) {
		return "", false
	}
	return strings.ToLower(s), true
}
