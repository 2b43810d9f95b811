package rpc

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/hashring"
)

func staticLister(calls *atomic.Int32, sets ...[]ConductorInfo) ConductorLister {
	return func(context.Context) ([]ConductorInfo, error) {
		n := int(calls.Add(1)) - 1
		if n >= len(sets) {
			n = len(sets) - 1
		}
		return sets[n], nil
	}
}

func TestRouterErrorsAndGroups(t *testing.T) {
	var calls atomic.Int32
	r := NewRouter(staticLister(&calls, nil), hashring.DefaultPartitionExponent, time.Hour)
	_, err := r.HostFor(context.Background(), Target{UUID: "u", Driver: "ipmi"})
	var tf *TemporaryFailure
	if !errors.As(err, &tf) || tf.HTTPCode() != 503 {
		t.Fatalf("no conductors: %v", err)
	}

	calls.Store(0)
	cs := []ConductorInfo{
		{Hostname: "c1", Group: "Rack-A", HardwareTypes: []string{"ipmi", "redfish"}},
		{Hostname: "c2", Group: "", HardwareTypes: []string{"fake-hardware"}},
	}
	r = NewRouter(staticLister(&calls, cs), hashring.DefaultPartitionExponent, time.Hour)
	tests := map[string]struct {
		t       Target
		want    string
		wantErr bool
	}{
		"group is case-insensitive": {t: Target{UUID: "u1", Driver: "ipmi", Group: "rack-a"}, want: "c1"},
		"default group":             {t: Target{UUID: "u1", Driver: "fake-hardware"}, want: "c2"},
		"driver in another group":   {t: Target{UUID: "u1", Driver: "ipmi"}, wantErr: true},
		"unknown driver":            {t: Target{UUID: "u1", Driver: "ilo", Group: "rack-a"}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := r.HostFor(context.Background(), tc.t)
			if tc.wantErr {
				var nv *NoValidHost
				if !errors.As(err, &nv) {
					t.Fatalf("err = %v, want NoValidHost", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("HostFor = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestRouterCachesUntilResetInterval(t *testing.T) {
	var calls atomic.Int32
	cs := []ConductorInfo{{Hostname: "c1", HardwareTypes: []string{"ipmi"}}}
	r := NewRouter(staticLister(&calls, cs), 5, 15*time.Second)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	for range 3 {
		if _, err := r.HostFor(context.Background(), Target{UUID: "u", Driver: "ipmi"}); err != nil {
			t.Fatal(err)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("lister called %d times within the interval, want 1", calls.Load())
	}
	now = now.Add(15 * time.Second)
	_, _ = r.HostFor(context.Background(), Target{UUID: "u", Driver: "ipmi"})
	if calls.Load() != 2 {
		t.Fatalf("lister called %d times after the interval, want 2", calls.Load())
	}
}
