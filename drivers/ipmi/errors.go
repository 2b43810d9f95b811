package ipmi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

// ErrInvalidInstanceInfo is returned by PrepareDeploy and Deploy when
// instance_info lacks what a network-boot ramdisk deploy needs.
var ErrInvalidInstanceInfo = errors.New("invalid instance_info")

// authFailures are go-ipmi's texts for rejected credentials; go-ipmi joins
// them as strings, so errors.Is(err, client.ErrRAKPAuthentication) is false.
var authFailures = []string{
	"RAKP2 authentication code mismatch",
	"RAKP authentication failed",
	"unauthorized name",
	"invalid role",
	"Insufficient privilege",
}

// isAuthFailure reports whether err means the BMC refused the credentials.
func isAuthFailure(err error) bool {
	if errors.Is(err, client.ErrRAKPAuthentication) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range authFailures {
		if strings.Contains(msg, strings.ToLower(s)) {
			return true
		}
	}
	return false
}

// isSilence reports whether err means the BMC did not answer: a UDP
// timeout, an unmatched reply, or ICMP port unreachable (a stopped BMC on
// a connected UDP socket). These are the signs of a dead session too.
func isSilence(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ECONNREFUSED):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "IPMI LAN:") || strings.Contains(msg, "i/o timeout") ||
		strings.Contains(msg, "connection refused")
}

// completionCode returns the IPMI completion code carried by err, if any.
func completionCode(err error) (types.CompletionCode, bool) {
	var re *types.ResponseError
	if errors.As(err, &re) {
		return re.CompletionCode(), true
	}
	return 0, false
}

// Completion codes the driver treats specially (IPMI 2.0 table 5-2).
const (
	ccNodeBusy          types.CompletionCode = 0xC0
	ccInvalidCommand    types.CompletionCode = 0xC1
	ccTimeout           types.CompletionCode = 0xC3
	ccOutOfSpace        types.CompletionCode = 0xC4
	ccParamOutOfRange   types.CompletionCode = 0xC9
	ccInvalidDataField  types.CompletionCode = 0xCC
	ccNotInPresentState types.CompletionCode = 0xD5
	// ccDisabled: the command (or sub-function) is disabled or unavailable.
	ccDisabled types.CompletionCode = 0xD6
	// ccParamNotSet is Get System Boot Options' "parameter not supported",
	// which a BMC that never had boot flags set answers.
	ccParamNotSet types.CompletionCode = 0x80
)

// classify turns a go-ipmi error into the SDK's kinds, naming the BMC and
// the operation: "ipmi 10.0.0.5:623: set power on: …". ctx is the caller's,
// to tell its deadline from a BMC timeout.
func classify(ctx context.Context, p params, op string, err error) error {
	if err == nil {
		return nil
	}
	prefix := fmt.Sprintf("ipmi %s: %s", p.addr(), op)
	switch cc, isCC := completionCode(err); {
	case errors.Is(err, plugins.ErrInvalidDriverInfo), errors.Is(err, plugins.ErrNotSupported),
		errors.Is(err, ErrInvalidInstanceInfo), errors.Is(err, plugins.ErrBMCUnreachable):
		return fmt.Errorf("%s: %w", prefix, scrub(err, p.password))
	case isAuthFailure(err):
		// go-ipmi's text is dropped: it adds nothing an operator can act on.
		return fmt.Errorf("%s: BMC rejected the user name or password (or cipher suite %d): %w: %w",
			prefix, p.suite, plugins.ErrCredentialsRefused, &plugins.InvalidDriverInfoError{Invalid: []string{KeyUsername, KeyPassword}})
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return fmt.Errorf("%s: %w", prefix, ctx.Err())
	case isSilence(err):
		return fmt.Errorf("%s: %w: %w", prefix, plugins.ErrBMCUnreachable, scrub(err, p.password))
	case isCC && (cc == ccNodeBusy || cc == ccTimeout || cc == ccOutOfSpace):
		return fmt.Errorf("%s: %w", prefix, plugins.MarkRetryable(scrub(err, p.password)))
	}
	return fmt.Errorf("%s: %w", prefix, scrub(err, p.password))
}

// scrub returns err, or a plain error with the password masked when the
// text carries it: no BMC library should echo a password, but a leak would
// be permanent in a node's last_error.
func scrub(err error, password string) error {
	if len(password) < 4 || !strings.Contains(err.Error(), password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), password, plugins.Masked))
}
