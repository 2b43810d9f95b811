package host

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	cfg, err := Config{RestartBackoff: 100 * time.Millisecond, MaxRestartBackoff: time.Second}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tests := map[int]time.Duration{
		1:  0, // the first restart after a crash is immediate
		2:  100 * time.Millisecond,
		3:  200 * time.Millisecond,
		4:  400 * time.Millisecond,
		5:  800 * time.Millisecond,
		6:  time.Second,
		60: time.Second,
	}
	for failures, want := range tests {
		if got := cfg.backoff(failures); got != want {
			t.Errorf("backoff(%d) = %v, want %v", failures, got, want)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	tests := map[string]struct {
		cfg     Config
		wantErr bool
	}{
		"defaults":          {Config{}, false},
		"backoff above max": {Config{RestartBackoff: time.Minute, MaxRestartBackoff: time.Second}, true},
		"protocol zero":     {Config{Protocols: []int{0}}, true},
		"built-in w/o path": {Config{BuiltIn: map[string]Command{"fake": {}}}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := tc.cfg.withDefaults(); (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

func TestHighestCommon(t *testing.T) {
	tests := map[string]struct {
		a, b []int
		want int
		ok   bool
	}{
		"same":      {[]int{1}, []int{1}, 1, true},
		"highest":   {[]int{1, 2, 3}, []int{2, 3, 4}, 3, true},
		"unordered": {[]int{2, 1}, []int{1, 2}, 2, true},
		"none":      {[]int{1}, []int{2}, 0, false},
	}
	for name, tc := range tests {
		if got, ok := highestCommon(tc.a, tc.b); got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %d, %v; want %d, %v", name, got, ok, tc.want, tc.ok)
		}
	}
}
