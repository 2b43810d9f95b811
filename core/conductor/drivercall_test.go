package conductor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/plugins"
)

// TestDriverCallTimeout: a driver call that never returns on its own is cut
// at DriverCallTimeout with an error naming the operation; 0 leaves the
// caller's deadline alone.
func TestDriverCallTimeout(t *testing.T) {
	hang := func(ctx context.Context, _ plugins.Node) error { <-ctx.Done(); return ctx.Err() }
	tests := map[string]struct {
		timeout, callerDeadline time.Duration
	}{
		"bounded by the option":     {timeout: 20 * time.Millisecond, callerDeadline: time.Minute},
		"caller's deadline is kept": {timeout: 0, callerDeadline: 20 * time.Millisecond},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &Service{cfg: Config{DriverCallTimeout: tc.timeout}}
			ctx, cancel := context.WithTimeout(context.Background(), tc.callerDeadline)
			defer cancel()
			start := time.Now()
			err := s.driverCall(ctx, &objects.Node{UUID: "u1", Driver: "fake-hardware"}, "get power state", hang)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want a deadline error", err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the call took %v", took)
			}
		})
	}
}
