package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rivet node history asks for the history at 1.78 whatever the client
// negotiated for the rest, and says what is needed when the server is
// older (a 406 there, not a bare "not found").
func TestNodeHistoryCommand(t *testing.T) {
	fake, url := newCLIFake(t, "1.1", "1.80")
	code, out, errOut := runCLI(t, "node", "--url", url, "history", "sim-0", "-f", "value")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "2026-11-27T10:00:00+00:00 ERROR power cond-a Driver fake-hardware failed to set power state to power off: BMC says no (request req-1)\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if d := cmp.Diff([]string{"1.78 GET /v1/nodes/sim-0/history?detail=true"}, fake.log()); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}

	_, old := newCLIFake(t, "1.1", "1.31")
	code, _, errOut = runCLI(t, "node", "--url", old, "history", "sim-0")
	if code != exitClientVersion || !strings.Contains(errOut, "node history needs API 1.78") {
		t.Fatalf("against 1.31: exit %d, stderr %q", code, errOut)
	}
	_, url2 := newCLIFake(t, "1.1", "1.80")
	code, _, errOut = runCLI(t, "node", "--url", url2, "history", "sim-0", "--api-version", "1.31")
	if code != exitClientVersion || !strings.Contains(errOut, "node history needs API 1.78, but API 1.31 was asked for") {
		t.Fatalf("asked at 1.31: exit %d, stderr %q", code, errOut)
	}
}
