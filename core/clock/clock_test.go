package clock

import (
	"testing"
	"time"
)

func TestParseSkew(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		"unset":    {"", 0, false},
		"behind":   {"-90s", -90 * time.Second, false},
		"ahead":    {"1m30s", 90 * time.Second, false},
		"not a dd": {"soon", 0, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseSkew(tc.in)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("parseSkew(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

func TestNowIsUTCMicroseconds(t *testing.T) {
	n := Now()
	if n.Location() != time.UTC || n.Nanosecond()%1000 != 0 {
		t.Fatalf("Now() = %v, want UTC truncated to microseconds", n)
	}
	if d := time.Since(n); d < -time.Second || d > time.Second {
		t.Fatalf("Now() is %v off with no skew set", d)
	}
}
