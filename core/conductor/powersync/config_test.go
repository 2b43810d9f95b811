package powersync

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	tests := map[string]struct {
		edit    func(c *Config)
		wantErr []string // substrings, one per expected problem
	}{
		"default":           {edit: func(c *Config) {}},
		"disabled":          {edit: func(c *Config) { c.Interval, c.Spread = 0, 0 }},
		"breaker off":       {edit: func(c *Config) { c.Breaker = BreakerConfig{} }},
		"negative interval": {edit: func(c *Config) { c.Interval = -time.Second }, wantErr: []string{"Interval"}},
		"spread not below interval": {
			edit: func(c *Config) { c.Spread = c.Interval }, wantErr: []string{"Spread"},
		},
		"no workers, no timeout": {
			edit:    func(c *Config) { c.Workers, c.CallTimeout = 0, 0 },
			wantErr: []string{"Workers", "CallTimeout"},
		},
		"breaker without backoff": {
			edit:    func(c *Config) { c.Breaker.Backoff, c.Breaker.MaxBackoff = 0, 0 },
			wantErr: []string{"Breaker.Backoff"},
		},
		"max backoff below backoff": {
			edit:    func(c *Config) { c.Breaker.MaxBackoff = time.Second },
			wantErr: []string{"Breaker.MaxBackoff"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if (err != nil) != (len(tc.wantErr) > 0) {
				t.Fatalf("Validate() = %v, want problems %q", err, tc.wantErr)
			}
			if err == nil {
				return
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.wantErr) {
				t.Errorf("Validate() = %q, want %d problems", lines, len(tc.wantErr))
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %v, want it to name %s", err, want)
				}
			}
		})
	}
}

func TestNewRequiresPorts(t *testing.T) {
	if _, err := New(DefaultConfig(), Deps{}); err == nil {
		t.Error("New without Source, Prober and Recorder succeeded")
	}
}
