package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

// Exit codes of the admin client (docs/admin/cli.md).
const (
	exitClientAPI         = 1 // the API refused or failed the request
	exitClientUsage       = 2 // bad arguments, format, URL or --api-version
	exitClientUnreachable = 3 // no HTTP answer from the API
	exitClientVersion     = 4 // no API microversion both sides accept
	exitClientWaitFailed  = 5 // a node reached a failure state while waiting
	exitClientWaitTimeout = 6 // a wait ran out of time
)

// clientTarget names what a command acted on, for messages: kind "node" and the
// ident the user typed.
type clientTarget struct {
	kind  client.Kind
	ident string
}

// about prefixes a message with its subject when the command named one.
func about(subject string, on clientTarget) string {
	if on.ident == "" {
		return ""
	}
	return subject + ": "
}

// cliError turns a client error into one line that says what went wrong
// and how to fix it, with the exit code for its class.
func cliError(err error, on clientTarget) error {
	if err == nil {
		return nil
	}
	var (
		ec      cli.ExitCoder
		cerr    *client.ConnectError
		verr    *client.VersionError
		ferr    *client.FeatureVersionError
		werr    *client.WaitError
		apiErr  *client.APIError
		subject = on.kind.Noun
	)
	if on.ident != "" {
		subject += " " + on.ident
	}
	switch {
	case errors.As(err, &ec):
		return err
	case errors.As(err, &cerr):
		return cli.Exit(fmt.Sprintf("cannot reach the Rivet API at %s: %s (is `rivet dev` running? set --url/RIVET_URL)",
			cerr.Endpoint, transportCause(cerr.Err)), exitClientUnreachable)
	case errors.As(err, &verr) && verr.NoMicroversions:
		return cli.Exit(verr.Error()+" (unset --api-version/RIVET_API_VERSION to go on at API 1.1)", exitClientVersion)
	case errors.As(err, &verr) && verr.UserGiven:
		return cli.Exit(verr.Error()+" (pick a version in both ranges with --api-version, or unset it to negotiate)", exitClientVersion)
	case errors.As(err, &verr):
		return cli.Exit(verr.Error()+" (upgrade the older side)", exitClientVersion)
	case errors.As(err, &ferr) && ferr.UserGiven:
		return cli.Exit(about(subject, on)+ferr.Error()+fmt.Sprintf(" (use --api-version %s or later, or unset it to negotiate)", ferr.Needs), exitClientVersion)
	case errors.As(err, &ferr):
		return cli.Exit(about(subject, on)+ferr.Error()+" (the API is older, or pinned to an older release until the upgrade is finished)", exitClientVersion)
	case errors.As(err, &werr) && errors.Is(err, client.ErrWaitTimeout):
		return cli.Exit(werr.Error()+" (raise --timeout, or check the conductor with rivet node show "+werr.Node+")", exitClientWaitTimeout)
	case errors.As(err, &werr):
		return cli.Exit(werr.Error(), exitClientWaitFailed)
	case errors.Is(err, client.ErrNotFound) && on.ident != "":
		return cli.Exit(fmt.Sprintf("%s not found (rivet %s list shows the %s)", subject, on.kind.Noun, on.kind.Path), exitClientAPI)
	case errors.As(err, &apiErr):
		msg := fmt.Sprintf("%s: %s", subject, apiErr.Message)
		if apiErr.Message == "" {
			msg = fmt.Sprintf("%s: the API answered %d", subject, apiErr.Status)
		}
		switch apiErr.Status {
		case 400:
			msg += stateHint(apiErr.Message, on)
		case 401, 403:
			msg += " (check --username/--password or RIVET_USERNAME/RIVET_PASSWORD)"
		case 406:
			msg += fmt.Sprintf(" (refused at API %s: this needs a newer --api-version)", apiErr.Version)
		case 409:
			// Only a lock is worth retrying; a duplicate MAC or name, a
			// node bound to an instance, … say themselves what is wrong.
			if strings.Contains(apiErr.Message, " is locked by ") {
				msg += " (still locked after the client's retries: raise --retries, or see what the node is doing with rivet node show)"
			}
		case 503:
			msg += " (still unavailable after the retries; retry later)"
		case 507:
			msg += " (an operator must free disk space on the database host; then retry)"
		}
		if apiErr.RequestID != "" {
			msg += " [request " + apiErr.RequestID + "]"
		}
		return cli.Exit(msg, exitClientAPI)
	}
	return cli.Exit(subject+": "+err.Error(), exitClientAPI)
}

// invalidState matches Ironic's InvalidStateRequested message.
var invalidState = regexp.MustCompile(`^The requested action "([^"]+)" can not be performed on node "([^"]+)" while it is in state "([^"]+)"`)

// stateHint says what to do about an action refused in the node's state:
// deploying a node that is already active (re-running the README's session
// on a reused rivet dev state) needs an undeploy first.
func stateHint(msg string, on clientTarget) string {
	m := invalidState.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	node := on.ident
	if node == "" {
		node = m[2]
	}
	if m[1] == "active" && m[3] == "active" {
		return fmt.Sprintf(" (it is deployed already: to deploy it again, rivet node undeploy %s --wait first)", node)
	}
	return fmt.Sprintf(" (rivet node show %s shows its state and target)", node)
}

// transportCause shortens a transport error to its useful part.
func transportCause(err error) string {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection refused"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// clientExitCode is the code cliError would give err.
func clientExitCode(err error) int {
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return exitClientAPI
}
