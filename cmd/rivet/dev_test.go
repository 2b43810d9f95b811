package main

import (
	"strings"
	"testing"
)

func TestDevRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]struct {
		args []string
		want string
	}{
		"bad listen":       {[]string{"--listen", "6385"}, "--listen \"6385\": want host:port"},
		"bad port":         {[]string{"--listen", "127.0.0.1:99999"}, "port must be 1 to 65535"},
		"negative systems": {[]string{"--sim-nodes", "-1"}, "--sim-nodes -1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"dev", "--state-dir", dir}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, errOut, tc.want)
			}
		})
	}
}
