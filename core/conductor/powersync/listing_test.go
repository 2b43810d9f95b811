package powersync

import (
	"fmt"
	"strings"
	"testing"
)

// TestListingRoundTrip: every node comes back from the listing as it was
// added, whichever chunk its strings landed in and however long they are.
func TestListingRoundTrip(t *testing.T) {
	long := strings.Repeat("x", maxLen+1)
	want := []Node{
		{UUID: "u-on", Name: "n1", BMC: "10.0.0.1:623", PowerState: "power on"},
		{UUID: "u-off", PowerState: "power off", Maintenance: true},
		{UUID: "u-other", Name: "named", PowerState: "error", Locked: true},
		{UUID: "u-none"},
		{UUID: "u-long-name", Name: long, PowerState: "power on"},
		{UUID: "u-long-state", PowerState: long},
		{UUID: "u-long-bmc", BMC: long, Maintenance: true, Locked: true},
	}
	// Enough nodes to fill several chunks, with a chunk-sized BMC.
	for i := range 3 * chunkSize / 40 {
		want = append(want, Node{UUID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Name: fmt.Sprint("node-", i), PowerState: "power on"})
	}
	want = append(want, Node{UUID: "u-chunk", BMC: strings.Repeat("b", chunkSize), PowerState: "power off"})
	var l listing
	for _, n := range want {
		l.add(n)
	}
	l.seal()
	if l.len() != len(want) || len(l.chunks) < 3 || len(l.big) != 3 {
		t.Fatalf("len %d, chunks %d, big %d; want %d, ≥ 3, 3", l.len(), len(l.chunks), len(l.big), len(want))
	}
	for i, w := range want {
		if got := l.node(int32(i)); got != w {
			t.Fatalf("node %d: got %+v, want %+v", i, got, w)
		}
		if l.uuid(int32(i)) != w.UUID || l.bmc(int32(i)) != w.BMC || l.maintenance(int32(i)) != w.Maintenance || l.locked(int32(i)) != w.Locked {
			t.Fatalf("node %d: accessors disagree with %+v", i, w)
		}
	}
}
