package jsonrpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"hash/maphash"
	"sync"
	"time"
)

// CallIDHeader names one JSON-RPC call, so a conductor runs it at most once
// when the client sends it again (markReplayable). HTTPTransport sends it
// on every call, never on a cast: 32 lowercase hex digits (128 random
// bits) made once per Send and kept by net/http's resend.
// Idempotency-Key still carries the request id, which every RPC of one
// REST request shares, because net/http resends only requests that have
// it.
//
// The header is additive: a conductor that predates it ignores it, and a
// request without it (an API that predates it, or a cast) is served as
// before, without the reply cache.
const CallIDHeader = "Rivet-Call-Id"

// callID is a call id's 128 random bits; the zero value is none (a
// cast).
type callID [16]byte

// newCallID returns a call id from crypto/rand.
func newCallID() callID {
	var id callID
	_, _ = rand.Read(id[:]) // never fails (crypto/rand.Read's contract)
	return id
}

// appendHex appends id as CallIDHeader carries it.
func (id callID) appendHex(buf []byte) []byte { return hex.AppendEncode(buf, id[:]) }

func (id callID) String() string {
	var b [32]byte
	return string(id.appendHex(b[:0]))
}

// validCallID says whether the conductor keys its reply cache on id: 16 to
// 64 letters, digits, '-', '_' or '.', so ids of another form (a UUID) do
// too. A request with any other value is served as one without the
// header: never refused, never cached.
func validCallID(id string) bool {
	if len(id) < 16 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// Reply cache bounds. A resend arrives milliseconds after the first copy
// (the client resends at once on a fresh connection), so what the bounds
// keep is ample; they hold memory, and replies that may carry node data,
// to little. At 2,500 enrolments a second a conductor keeps the last
// 0.25 s or so of node replies (1 MiB of 1.6 KB replies): a 4 MiB bound
// raised a conductor's peak RSS while enrolling 10,000 nodes from 42 to
// 54 MiB, this one to 45-46 MiB (docs/performance.md).
const (
	replayTTL        = 10 * time.Second
	replayMaxEntries = 1024
	replayMaxBytes   = 1 << 20
	replayMaxReply   = 1 << 20 // larger replies are not kept once answered
	// replayGrace is how long a call keeps running after every request
	// waiting for it has gone (the first copy's connection closed under
	// it), for its resend to arrive and collect the reply.
	replayGrace = 5 * time.Second
)

// replayCache lets the JSON-RPC handler run each call id once: the first
// request with an id runs the call and records its encoded reply; a copy
// arriving while it runs waits for that reply, one arriving later gets it
// from the cache. Completed entries leave oldest first when more than
// maxEntries or maxBytes of replies are kept, and ttl after completion;
// a call still running is never evicted. An entry also records a hash of
// the request body: a request reusing an id with another body is served
// on its own, uncached. Replies stay in memory only and are never logged.
type replayCache struct {
	ttl        time.Duration
	grace      time.Duration
	maxEntries int
	maxBytes   int
	maxReply   int
	seed       maphash.Seed

	mu    sync.Mutex
	calls map[string]*replayEntry
	// done lists completed entries in the cache, oldest first, from
	// done[head].
	done  []*replayEntry
	head  int
	bytes int // replies of the entries in done
	sweep *time.Timer
	armed bool
}

// replayEntry is one call id's call. Fields after ready are guarded by
// replayCache.mu until ready is closed; reply is read-only afterwards.
type replayEntry struct {
	id    string
	sum   uint64 // maphash of the request body
	ready chan struct{}
	reply []byte // the encoded reply; nil if the call ended without one
	// doneAt is when the call completed.
	doneAt time.Time
	// waiters counts the requests still waiting for the reply; cancel
	// ends the call's context, idle does so after grace when none is.
	waiters  int
	cancel   context.CancelFunc
	idle     *time.Timer
	finished bool
}

func newReplayCache() *replayCache {
	return &replayCache{ttl: replayTTL, grace: replayGrace, maxEntries: replayMaxEntries,
		maxBytes: replayMaxBytes, maxReply: replayMaxReply, seed: maphash.MakeSeed(),
		calls: map[string]*replayEntry{}}
}

// join returns the entry for id and whether the caller owns it (runs the
// call, then calls finish). For a call still running, the caller counts
// as a waiter until the reply is ready or it calls leave. nil: id was
// used for another body; serve the request uncached.
func (c *replayCache) join(id string, body []byte) (e *replayEntry, owner bool) {
	sum := maphash.Bytes(c.seed, body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.calls[id]; e != nil {
		if e.sum != sum {
			return nil, false
		}
		if !e.finished {
			e.waiters++
			if e.idle != nil {
				e.idle.Stop()
			}
		}
		return e, false
	}
	e = &replayEntry{id: id, sum: sum, ready: make(chan struct{}), waiters: 1}
	c.calls[id] = e
	return e, true
}

// leave is a waiter of e giving up (its request's context ended). When
// none is left while the call runs, the call's context ends after grace
// unless a copy of the call arrives first.
func (c *replayCache) leave(e *replayEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.finished {
		return
	}
	if e.waiters--; e.waiters > 0 || e.cancel == nil {
		return
	}
	if e.idle == nil {
		e.idle = time.AfterFunc(c.grace, e.cancel)
	} else {
		e.idle.Reset(c.grace)
	}
}

// start gives e's owner the context to run the call under: parent's
// values, not its cancellation (the first copy's connection may close
// under it while its resend waits), ended by grace with no waiter left.
func (c *replayCache) start(e *replayEntry, parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	c.mu.Lock()
	e.cancel = cancel
	c.mu.Unlock()
	return ctx, cancel
}

// finish records e's reply (nil when the call ended without one, which
// drops the entry) and wakes its waiters.
func (c *replayCache) finish(e *replayEntry, reply []byte) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e.finished = true
	e.reply = reply
	if e.idle != nil {
		e.idle.Stop()
	}
	close(e.ready)
	if reply == nil || len(reply) > c.maxReply {
		delete(c.calls, e.id)
		return
	}
	e.doneAt = now
	c.done = append(c.done, e)
	c.bytes += len(reply)
	c.evictLocked(now)
	if !c.armed && c.head < len(c.done) {
		c.armed = true
		if c.sweep == nil {
			c.sweep = time.AfterFunc(c.ttl, c.expire)
		} else {
			c.sweep.Reset(c.ttl)
		}
	}
}

// evictLocked drops the oldest completed entries while the cache is over
// its bounds or they are older than ttl.
func (c *replayCache) evictLocked(now time.Time) {
	for c.head < len(c.done) {
		e := c.done[c.head]
		if len(c.done)-c.head <= c.maxEntries && c.bytes <= c.maxBytes && now.Sub(e.doneAt) < c.ttl {
			break
		}
		c.done[c.head] = nil
		c.head++
		c.bytes -= len(e.reply)
		delete(c.calls, e.id)
	}
	if c.head == len(c.done) {
		c.done, c.head = c.done[:0], 0
	} else if c.head > 1024 && c.head > len(c.done)/2 {
		n := copy(c.done, c.done[c.head:])
		clear(c.done[n:])
		c.done, c.head = c.done[:n], 0
	}
}

// expire runs ttl after the oldest kept entry completed, so replies do
// not stay in memory when calls stop coming.
func (c *replayCache) expire() {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked(now)
	c.armed = c.head < len(c.done)
	if c.armed {
		c.sweep.Reset(c.done[c.head].doneAt.Add(c.ttl).Sub(now))
	}
}

// size returns the number of entries and of kept reply bytes.
func (c *replayCache) size() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls), c.bytes
}
