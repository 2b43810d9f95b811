package host

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// TestStatusRoundTrip sends each kind of driver error through toStatus and
// back through fromStatus, as it crosses the plugin boundary, and checks the
// kind, the retry-ability and the message survive.
func TestStatusRoundTrip(t *testing.T) {
	tests := map[string]struct {
		err       error
		code      codes.Code
		is        error
		retryable bool
	}{
		"not supported":     {fmt.Errorf("driver x: nmi: %w", plugins.ErrNotSupported), codes.Unimplemented, plugins.ErrNotSupported, false},
		"bmc unreachable":   {fmt.Errorf("driver x: dial 10.0.0.1: %w", plugins.ErrBMCUnreachable), codes.Unavailable, plugins.ErrBMCUnreachable, true},
		"invalid info":      {fmt.Errorf("driver x: %w", plugins.ErrInvalidDriverInfo), codes.InvalidArgument, plugins.ErrInvalidDriverInfo, false},
		"marked retryable":  {plugins.MarkRetryable(errors.New("driver x: BMC busy")), codes.Unknown, nil, true},
		"plain error":       {errors.New("driver x: boom"), codes.Unknown, nil, false},
		"deadline":          {fmt.Errorf("driver x: %w", context.DeadlineExceeded), codes.DeadlineExceeded, context.DeadlineExceeded, false},
		"canceled":          {fmt.Errorf("driver x: %w", context.Canceled), codes.Canceled, context.Canceled, false},
		"crash is not kept": {&PluginCrashedError{Driver: "inner", Err: errors.New("eof")}, codes.Unknown, nil, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wire := wire.ToStatus(tc.err)
			if got := status.Code(wire); got != tc.code {
				t.Errorf("code %v, want %v", got, tc.code)
			}
			back := fromStatus(wire)
			if back.Error() != tc.err.Error() {
				t.Errorf("message %q, want %q", back, tc.err)
			}
			if tc.is != nil && !errors.Is(back, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", back, tc.is)
			}
			if errors.Is(back, ErrPluginCrashed) {
				t.Errorf("a driver's error came back as a plugin crash: %v", back)
			}
			if got := plugins.IsRetryable(back); got != tc.retryable {
				t.Errorf("retryable %v, want %v", got, tc.retryable)
			}
		})
	}
}

// TestStatusInvalidDriverInfoKeys checks the typed error keeps its key
// names across the boundary.
func TestStatusInvalidDriverInfoKeys(t *testing.T) {
	in := &plugins.InvalidDriverInfoError{Missing: []string{"redfish_address"}, Invalid: []string{"redfish_verify_ca"}}
	var out *plugins.InvalidDriverInfoError
	if !errors.As(fromStatus(wire.ToStatus(fmt.Errorf("driver x: %w", in))), &out) {
		t.Fatal("not an *plugins.InvalidDriverInfoError after the round trip")
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("keys changed (-sent +received):\n%s", diff)
	}
}

// TestFromStatusWithoutDetail covers statuses a plugin did not produce
// through toStatus: an older plugin's Unimplemented and transport failures.
func TestFromStatusWithoutDetail(t *testing.T) {
	tests := map[string]struct {
		code      codes.Code
		is        error
		retryable bool
	}{
		"older plugin lacks the RPC": {codes.Unimplemented, plugins.ErrNotSupported, false},
		"transport broke":            {codes.Unavailable, ErrPluginCrashed, true},
		"deadline":                   {codes.DeadlineExceeded, context.DeadlineExceeded, false},
		"canceled":                   {codes.Canceled, context.Canceled, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := fromStatus(status.Error(tc.code, "x"))
			if !errors.Is(err, tc.is) || plugins.IsRetryable(err) != tc.retryable {
				t.Errorf("got %v (retryable %v), want Is %v, retryable %v", err, plugins.IsRetryable(err), tc.is, tc.retryable)
			}
		})
	}
	if fromStatus(nil) != nil || wire.ToStatus(nil) != nil {
		t.Error("nil must stay nil")
	}
}
