package client

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scriptedStates serves GET /v1/nodes/n1/states from a script of
// (provision_state, target_provision_state, last_error); the last entry
// repeats.
func scriptedStates(script [][3]any) http.Handler {
	var mu sync.Mutex
	i := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/nodes/n1/states", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		s := script[min(i, len(script)-1)]
		i++
		mu.Unlock()
		writeJSON(w, 200, map[string]any{"provision_state": s[0], "target_provision_state": s[1], "last_error": s[2], "power_state": "power on"})
	})
	return mux
}

func TestWaitForProvisionState(t *testing.T) {
	cases := map[string]struct {
		script    [][3]any
		target    string
		wantState string
		wantErr   string // "", "failed", "timeout"
		wantLast  string
		wantSeen  []string
	}{
		"reaches active": {
			script:    [][3]any{{"deploying", "active", nil}, {"wait call-back", "active", nil}, {"active", nil, nil}},
			target:    "active",
			wantState: "active",
			wantSeen:  []string{"deploying", "wait call-back", "active"},
		},
		"deploy failed reports last_error": {
			script:    [][3]any{{"deploying", "active", nil}, {"deploy failed", "active", "BMC said no"}},
			target:    "active",
			wantState: "deploy failed", wantErr: "failed", wantLast: "BMC said no",
			wantSeen: []string{"deploying", "deploy failed"},
		},
		"settles elsewhere: verify failed back to enroll": {
			script:    [][3]any{{"verifying", "manageable", nil}, {"enroll", nil, "bad credentials"}},
			target:    "manageable",
			wantState: "enroll", wantErr: "failed", wantLast: "bad credentials",
			wantSeen: []string{"verifying", "enroll"},
		},
		"timeout": {
			script:    [][3]any{{"deploying", "active", nil}},
			target:    "active",
			wantState: "deploying", wantErr: "timeout",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, srv := newFake(t, "1.1", maxV, scriptedStates(tc.script))
			c := newTestClient(t, srv.URL, Request{}, nil)
			var seen []string
			st, err := c.WaitForProvisionState(context.Background(), "n1", WaitOptions{
				// Cases that settle get a timeout no loaded machine reaches;
				// the timeout case ends on its own after 100 ms.
				Target: tc.target, Timeout: map[bool]time.Duration{true: 100 * time.Millisecond, false: 10 * time.Second}[tc.wantErr == "timeout"],
				Interval: time.Millisecond,
				OnPoll: func(s Resource) {
					if p := s.String("provision_state"); len(seen) == 0 || seen[len(seen)-1] != p {
						seen = append(seen, p)
					}
				},
			})
			if got := st.String("provision_state"); got != tc.wantState {
				t.Errorf("last state %q, want %q", got, tc.wantState)
			}
			var werr *WaitError
			switch tc.wantErr {
			case "":
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			case "failed":
				if !errors.As(err, &werr) || errors.Is(err, ErrWaitTimeout) || werr.LastError != tc.wantLast {
					t.Fatalf("err = %v, want a failure carrying last_error %q", err, tc.wantLast)
				}
			case "timeout":
				if !errors.As(err, &werr) || !errors.Is(err, ErrWaitTimeout) {
					t.Fatalf("err = %v, want a timeout", err)
				}
			}
			if tc.wantSeen != nil {
				if diff := cmp.Diff(tc.wantSeen, seen); diff != "" {
					t.Errorf("states seen (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestWaitCancelledIsNotATimeout(t *testing.T) {
	_, srv := newFake(t, "1.1", maxV, scriptedStates([][3]any{{"deploying", "active", nil}}))
	c := newTestClient(t, srv.URL, Request{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.WaitForProvisionState(ctx, "n1", WaitOptions{Target: "active", Interval: time.Millisecond,
		OnPoll: func(Resource) { cancel() }})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrWaitTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
