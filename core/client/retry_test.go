package client

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestRetries(t *testing.T) {
	cases := map[string]struct {
		answers   []int // status per attempt; the last repeats
		message   string
		wantCalls int
		wantErr   bool
	}{
		"locked node retried until accepted": {answers: []int{409, 409, 202}, message: "Node n1 is locked by host c1, please retry after the current operation is completed.", wantCalls: 3},
		"503 retried until accepted":         {answers: []int{503, 202}, message: "Resource temporarily unavailable, please retry.", wantCalls: 2},
		"wrong state is not retried":         {answers: []int{409}, message: "Node n1 is in state active, cannot be deleted.", wantCalls: 1, wantErr: true},
		"retries run out":                    {answers: []int{503}, message: "busy", wantCalls: 4, wantErr: true},
		"bad request is not retried":         {answers: []int{400}, message: "bad", wantCalls: 1, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			fake, srv := newFake(t, "1.1", maxV, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				status := tc.answers[min(n, len(tc.answers)-1)]
				n++
				mu.Unlock()
				if status >= 400 {
					writeError(w, status, "faultstring", tc.message)
					return
				}
				w.WriteHeader(status)
			}))
			c, err := New(Options{URL: srv.URL, Retries: 3, RetryInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			err = c.SetPowerState(context.Background(), "n1", PowerOn)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got := len(fake.requests()); got != tc.wantCalls {
				t.Errorf("%d requests, want %d", got, tc.wantCalls)
			}
		})
	}
}
