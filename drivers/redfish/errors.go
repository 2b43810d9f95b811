package redfish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// Sentinel errors of this driver, beside the SDK's.
var (
	// ErrBreakerOpen: the BMC failed too often in a row and is left alone
	// for a while. It is also ErrBMCUnreachable, so it is retryable.
	ErrBreakerOpen = errors.New("circuit breaker open")
	// ErrSessionLimit: the BMC has no session to spare and the node's
	// redfish_auth_type is "session". Retryable.
	ErrSessionLimit = errors.New("BMC session limit reached")
	// ErrInvalidInstanceInfo: the node's instance_info lacks what the
	// deploy needs (boot_iso) or holds a value its BMC refuses.
	ErrInvalidInstanceInfo = errors.New("invalid instance_info")
)

// Error is what every failed call returns: it names the driver, the node,
// the BMC and the operation. Its message never holds a driver_info secret:
// the text of the underlying failure is scrubbed of them, and the
// underlying error itself is not kept, so nothing can unwrap to it.
type Error struct {
	// Node is the node's UUID.
	Node string
	// BMC is the redfish_address (scheme, host and port only).
	BMC string
	// Op names the operation ("set power state").
	Op string
	// Status is the HTTP status the BMC answered with, 0 when it did not.
	Status int
	// MessageID is the Redfish MessageId of the answer, if any.
	MessageID string

	msg       string // scrubbed
	kind      error  // an SDK or package sentinel, or nil
	retryable bool
}

// Error reads "driver redfish: node <uuid>: BMC <address>: <op>: <cause>".
func (e *Error) Error() string {
	return fmt.Sprintf("driver redfish: node %s: BMC %s: %s: %s", e.Node, e.BMC, e.Op, e.msg)
}

// Unwrap returns the error's kind (plugins.ErrBMCUnreachable, …), not the
// raw cause, which may hold a BMC's echo of a secret.
func (e *Error) Unwrap() error { return e.kind }

// Retryable reports whether trying again later may succeed.
func (e *Error) Retryable() bool { return e.retryable }

// failure is the class of an error, for the breaker and for Error.
type failure int

const (
	failNone     failure = iota
	failCaller           // the caller's ctx ended: not the BMC's fault
	failClient           // a 4xx, a refusal, a value we could not use
	failAuth             // 401 or 403
	failBusy             // 503: the BMC says try later
	failBMC              // a 5xx: counts against the breaker
	failNoAnswer         // no answer: counts against the breaker
	failPrecond          // 412: a stale ETag
	failQueue            // no request slot before the deadline: not the BMC's fault
)

// classify sorts err. callerCtx tells a caller's deadline (failCaller)
// from a request timing out on its own (failNoAnswer).
func classify(callerCtx context.Context, err error) failure {
	var rf *schemas.Error
	var ne net.Error
	var certErr *tls.CertificateVerificationError
	var authorityErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case err == nil:
		return failNone
	case errors.Is(err, errNoSlot):
		return failQueue
	case callerCtx.Err() != nil && errors.Is(err, context.Canceled):
		return failCaller
	case errors.As(err, &rf) && rf.HTTPReturnedStatusCode != 0:
		switch s := rf.HTTPReturnedStatusCode; {
		case s == http.StatusUnauthorized || s == http.StatusForbidden:
			return failAuth
		case s == http.StatusPreconditionFailed:
			return failPrecond
		case s == http.StatusServiceUnavailable:
			return failBusy
		case s >= 500:
			return failBMC
		}
		return failClient
	case errors.As(err, &certErr), errors.As(err, &authorityErr), errors.As(err, &hostErr):
		return failClient // the BMC answered, with a certificate we refuse
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne), errors.Is(err, net.ErrClosed),
		strings.Contains(err.Error(), "EOF"), strings.Contains(err.Error(), "connection reset"):
		return failNoAnswer
	}
	return failClient
}

// newError builds the Error for err, which classify sorted as f.
func newError(ni nodeInfo, node, op string, f failure, err error) *Error {
	e := &Error{Node: node, BMC: ni.address, Op: op}
	var rf *schemas.Error
	var typed *Error
	switch {
	case errors.As(err, &typed):
		// Already ours (a nested operation): keep its facts, rename the op.
		cp := *typed
		cp.Node, cp.Op = node, op
		return &cp
	case errors.As(err, &rf) && rf.HTTPReturnedStatusCode != 0:
		e.Status = rf.HTTPReturnedStatusCode
		e.MessageID = messageID(rf)
		e.msg = fmt.Sprintf("HTTP %d %s: %s", e.Status, e.MessageID, firstMessage(rf))
	default:
		e.msg = err.Error()
	}
	switch f {
	case failNoAnswer:
		e.kind, e.retryable = plugins.ErrBMCUnreachable, true
		e.msg = "no answer: " + e.msg
	case failQueue:
		e.kind, e.retryable = plugins.ErrBMCUnreachable, true
	case failBusy, failPrecond:
		e.retryable = true
	case failCaller:
		e.kind = context.Canceled
	case failAuth:
		e.kind = &plugins.InvalidDriverInfoError{Invalid: []string{KeyUsername, KeyPassword}}
		// Not "invalid credentials": the keys may be well-formed, the BMC
		// said no. The address never holds credentials (parseInfo refuses
		// them), so it is safe to show.
		e.msg = fmt.Sprintf("the BMC at %s refused the credentials (HTTP %d); check %s and %s",
			ni.address, e.Status, KeyUsername, KeyPassword)
	}
	var invalid *plugins.InvalidDriverInfoError
	switch {
	case errors.As(err, &invalid):
		e.kind = invalid
	case errors.Is(err, plugins.ErrNotSupported):
		e.kind = plugins.ErrNotSupported
	case errors.Is(err, ErrSessionLimit):
		e.kind = ErrSessionLimit
	case errors.Is(err, ErrInvalidInstanceInfo):
		e.kind = ErrInvalidInstanceInfo
	}
	e.retryable = e.retryable || plugins.IsRetryable(err)
	e.msg = scrub(e.msg, ni.secrets)
	return e
}

// messageID is the most specific MessageId of a Redfish error body: the
// first extended info's, else the top-level code.
func messageID(rf *schemas.Error) string {
	for _, x := range rf.ExtendedInfos {
		if x.MessageID != "" {
			return x.MessageID
		}
	}
	return rf.Code
}

func firstMessage(rf *schemas.Error) string {
	for _, x := range rf.ExtendedInfos {
		if x.Message != "" {
			return x.Message
		}
	}
	if rf.Message != "" {
		return rf.Message
	}
	return http.StatusText(rf.HTTPReturnedStatusCode)
}

// isMessage reports whether err is a Redfish answer whose MessageId ends
// with name ("SessionLimitExceeded"), whatever the registry version.
func isMessage(err error, name string) bool {
	var rf *schemas.Error
	if !errors.As(err, &rf) {
		return false
	}
	if strings.HasSuffix(rf.Code, "."+name) {
		return true
	}
	for _, x := range rf.ExtendedInfos {
		if strings.HasSuffix(x.MessageID, "."+name) {
			return true
		}
	}
	return false
}

// scrub masks every secret in s. A BMC may echo a request body in an error,
// so nothing that came from the wire is trusted to be clean.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, plugins.Masked)
		}
	}
	return s
}
