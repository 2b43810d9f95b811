package htpasswd

import (
	"fmt"
	"testing"
	"time"
)

// fakeClock is an injectable clock for the back-off.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestBackoffLocksOutAfterFreeFailures(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	b := NewBackoff(clk.now)
	const c = "192.0.2.7"
	// Each failure past the free ones doubles the lock-out, up to LockMax.
	want := []time.Duration{0, 0, 0, 0, 0, LockBase, 2 * LockBase, 4 * LockBase, 8 * LockBase, 16 * LockBase, LockMax, LockMax}
	for i, w := range want {
		if got := b.Wait(c); got != 0 {
			t.Fatalf("failure %d: asked to wait %v before trying", i+1, got)
		}
		if got := b.Failed(c); got != w {
			t.Fatalf("failure %d: locked out %v, want %v", i+1, got, w)
		}
		if got := b.Wait(c); got != w {
			t.Fatalf("failure %d: Wait %v, want %v", i+1, got, w)
		}
		clk.advance(w / 2)
		if w > 0 && b.Wait(c) != w-w/2 {
			t.Fatalf("failure %d: halfway Wait %v, want %v", i+1, b.Wait(c), w-w/2)
		}
		clk.advance(w - w/2)
	}
	if b.Wait("192.0.2.8") != 0 {
		t.Fatal("another client is locked out too")
	}
	// The user who gets it right after the lock-out is not held back any
	// more: the count starts over.
	b.Succeeded(c)
	if b.Wait(c) != 0 || b.Failed(c) != 0 || b.Len() != 1 {
		t.Fatalf("success did not reset: wait %v len %d", b.Wait(c), b.Len())
	}
}

func TestBackoffForgets(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	b := NewBackoff(clk.now)
	for range FreeFailures + 3 {
		b.Failed("c")
	}
	clk.advance(ForgetAfter - time.Second)
	if got := b.Failed("c"); got != 8*LockBase {
		t.Fatalf("failures forgotten too early: lock %v", got)
	}
	clk.advance(ForgetAfter)
	if got := b.Wait("c"); got != 0 || b.Len() != 0 {
		t.Fatalf("not forgotten after %v: wait %v, %d tracked", ForgetAfter, got, b.Len())
	}
	if got := b.Failed("c"); got != 0 {
		t.Fatalf("first failure after forgetting locks out %v", got)
	}
}

// An attacker trying many clients cannot grow the table past MaxClients;
// one rotating user names is one client (the key has no user in it).
func TestBackoffBoundedMemory(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	b := NewBackoff(clk.now)
	for i := range MaxClients + 500 {
		clk.advance(time.Millisecond)
		b.Failed(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	if b.Len() != MaxClients {
		t.Fatalf("%d clients tracked, want at most %d", b.Len(), MaxClients)
	}
	// The oldest went first; the newest is still tracked.
	if _, ok := b.clients["10.0.0.0"]; ok {
		t.Error("the oldest client was kept")
	}
	last := MaxClients + 499
	if _, ok := b.clients[fmt.Sprintf("10.%d.%d.%d", last>>16&255, last>>8&255, last&255)]; !ok {
		t.Error("the newest client was dropped")
	}
}

func TestClientKey(t *testing.T) {
	tests := map[string]string{
		"192.0.2.1:40000":               "192.0.2.1",
		"192.0.2.1":                     "192.0.2.1",
		"[::ffff:192.0.2.1]:1":          "192.0.2.1",
		"[2001:db8:1:2:aaaa::1]:443":    "2001:db8:1:2::/64",
		"[2001:db8:1:2:bbbb:cccc::9]:1": "2001:db8:1:2::/64",
		"[2001:db8:1:3::1]:443":         "2001:db8:1:3::/64",
		"@":                             "@",
	}
	for in, want := range tests {
		if got := ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkBackoffFailedFullTable(b *testing.B) {
	b.ReportAllocs()
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	bo := NewBackoff(clk.now)
	i := 0
	for b.Loop() {
		clk.advance(time.Millisecond)
		bo.Failed(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		i++
	}
}
