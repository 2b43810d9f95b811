package api

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RateLimit is the per-client token bucket of [api] rate_limit and
// rate_limit_burst: each client IP address may make Burst requests at once
// and PerSecond requests per second sustained. PerSecond 0 disables it.
type RateLimit struct {
	PerSecond int
	Burst     int
}

// limiterSweepEvery is how often idle clients' buckets are dropped, so the
// table holds only clients seen lately.
const limiterSweepEvery = time.Minute

// limiter holds one token bucket per client IP.
type limiter struct {
	rate, burst float64
	now         func() time.Time

	mu        sync.Mutex
	clients   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// newLimiter returns nil when rl disables limiting.
func newLimiter(rl RateLimit, now func() time.Time) *limiter {
	if rl.PerSecond <= 0 {
		return nil
	}
	burst := max(rl.Burst, 1)
	return &limiter{rate: float64(rl.PerSecond), burst: float64(burst), now: now, clients: map[string]*bucket{}, lastSweep: now()}
}

// allow takes a token for client, or says how long until one is free.
func (l *limiter) allow(client string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.lastSweep) >= limiterSweepEvery {
		l.sweep(now)
	}
	b := l.clients[client]
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		l.clients[client] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// sweep drops the buckets that have refilled: their clients are idle.
func (l *limiter) sweep(now time.Time) {
	for c, b := range l.clients {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.clients, c)
		}
	}
	l.lastSweep = now
}

// clientIP is the address the rate limit counts r against: the TCP peer's,
// or, when the peer is one of l's trusted proxies, the nearest address in
// X-Forwarded-For that is not itself a trusted proxy (each proxy appends
// the address it received the request from, so what lies further left was
// written by the client and is not believed). X-Forwarded-For from any
// other peer is ignored: any client could set it.
func clientIP(r *http.Request, l *Links) string {
	peer := r.RemoteAddr
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		peer = host
	}
	if l == nil || !l.trusted(r) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a hop the proxies did not write: stop believing
		}
		if !l.trustedAddr(a) {
			return a.Unmap().String()
		}
	}
	return peer
}

// writeRateLimited answers 429 with Ironic's error body and Retry-After in
// whole seconds (at least 1).
func writeRateLimited(w http.ResponseWriter, wait time.Duration) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	WriteFault(w, http.StatusTooManyRequests, fmt.Sprintf("Too many requests from this client; retry in %d seconds.", secs))
}
