package htpasswd

import (
	"net"
	"sync"
	"time"
)

// The failed-login back-off's numbers (docs/admin/security.md): a client
// may fail FreeFailures logins in a row at full speed; every further
// failure locks it out for LockBase, doubled per failure up to LockMax.
// A client's record is forgotten ForgetAfter after its last failure, and
// at once on a successful login. At most MaxClients clients are tracked:
// past that, the one whose last failure is oldest is forgotten first.
const (
	FreeFailures = 5
	LockBase     = time.Second
	LockMax      = 30 * time.Second
	ForgetAfter  = 15 * time.Minute
	MaxClients   = 10000
)

// Backoff slows down password guessing over HTTP basic auth: per client,
// failed logins beyond FreeFailures lock the client out for a time that
// doubles with each failure, up to LockMax. A locked-out client is
// answered at once, with no bcrypt work: guessing costs the server
// nothing while it waits.
//
// Clients are keyed by IP address (an IPv6 address by its /64, the block
// one host is usually given), never by user name: an attacker rotating
// user names is one client, and the table does not grow with the names
// tried. It holds at most MaxClients entries (about 100 bytes each, so
// around 1 MB), whatever the number of clients trying.
//
// Backoff is safe for concurrent use; the zero value is not usable (New).
type Backoff struct {
	now func() time.Time

	mu      sync.Mutex
	clients map[string]*failures
}

type failures struct {
	count int       // consecutive failed logins
	last  time.Time // of the last failure
	until time.Time // locked out until
}

// NewBackoff returns an empty back-off reading the time from now (nil:
// time.Now).
func NewBackoff(now func() time.Time) *Backoff {
	if now == nil {
		now = time.Now
	}
	return &Backoff{now: now, clients: map[string]*failures{}}
}

// ClientKey is the back-off key of an address as http.Request.RemoteAddr
// gives it ("host:port", or a bare host): the IP, or for IPv6 its /64.
func ClientKey(remoteAddr string) string {
	host := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	default:
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
}

// Wait returns how long client must wait before its next login attempt
// is examined; zero lets it try now.
func (b *Backoff) Wait(client string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.clients[client]
	if f == nil {
		return 0
	}
	now := b.now()
	if now.Sub(f.last) >= ForgetAfter {
		delete(b.clients, client)
		return 0
	}
	if d := f.until.Sub(now); d > 0 {
		return d
	}
	return 0
}

// Failed records a failed login by client and returns how long it is now
// locked out (zero while it has failures to spare).
func (b *Backoff) Failed(client string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	f := b.clients[client]
	if f != nil && now.Sub(f.last) >= ForgetAfter {
		f = nil
	}
	if f == nil {
		if len(b.clients) >= MaxClients {
			b.evict(now)
		}
		f = &failures{}
		b.clients[client] = f
	}
	f.count++
	f.last = now
	over := f.count - FreeFailures
	if over <= 0 {
		return 0
	}
	lock := LockMax
	if over <= 16 { // 2^16 s is past any LockMax: no overflow, same cap
		lock = min(LockBase<<(over-1), LockMax)
	}
	f.until = now.Add(lock)
	return lock
}

// Succeeded forgets client's failures: a user who got the password right
// is not held back by the ones they got wrong.
func (b *Backoff) Succeeded(client string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.clients, client)
}

// Len is the number of clients tracked.
func (b *Backoff) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.clients)
}

// evict makes room: it drops every forgotten client, and if none was,
// the one whose last failure is oldest.
func (b *Backoff) evict(now time.Time) {
	var oldest string
	var oldestAt time.Time
	for c, f := range b.clients {
		if now.Sub(f.last) >= ForgetAfter {
			delete(b.clients, c)
			continue
		}
		if oldest == "" || f.last.Before(oldestAt) {
			oldest, oldestAt = c, f.last
		}
	}
	if len(b.clients) >= MaxClients {
		delete(b.clients, oldest)
	}
}
