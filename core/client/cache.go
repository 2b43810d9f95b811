package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/version"
)

// DefaultCacheTTL is how long a negotiated version stays valid: long enough
// that a shell session does not renegotiate on every command, short enough
// that an upgraded server is noticed soon.
const DefaultCacheTTL = 15 * time.Minute

// VersionCache remembers the version negotiated with each endpoint, so
// later clients (later invocations, for a file cache) do not renegotiate
// (use case 7A). Implementations are safe for concurrent use.
type VersionCache interface {
	// Load returns the version stored for endpoint, if any and still fresh.
	Load(endpoint string) (version.Version, bool)
	// Store records v for endpoint. Errors are the cache's own business: a
	// cache that cannot write costs a renegotiation, never a failed command.
	Store(endpoint string, v version.Version)
}

// DefaultCachePath is versions.json under the user cache directory
// ($XDG_CACHE_HOME/rivet or ~/.cache/rivet on Linux).
func DefaultCachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "rivet", "versions.json"), nil
}

type cacheEntry struct {
	Version  version.Version `json:"version"`
	StoredAt time.Time       `json:"stored_at"`
}

// FileCache is a VersionCache in a JSON file keyed by endpoint URL:
// {"http://h:6385/v1": {"version": "1.10", "stored_at": "…"}}. Writes go
// through a temporary file and a rename, so concurrent invocations never
// read a torn file (the last writer wins).
type FileCache struct {
	path string
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
}

// NewFileCache returns a cache in the file at path whose entries expire
// after ttl (DefaultCacheTTL if ttl <= 0). now is the clock (time.Now if nil).
func NewFileCache(path string, ttl time.Duration, now func() time.Time) *FileCache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if now == nil {
		now = time.Now
	}
	return &FileCache{path: path, ttl: ttl, now: now}
}

// Load implements VersionCache.
func (c *FileCache) Load(endpoint string) (version.Version, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.read()[endpoint]
	if !ok || e.Version.IsZero() || c.now().Sub(e.StoredAt) > c.ttl || e.StoredAt.After(c.now().Add(time.Minute)) {
		return version.Version{}, false
	}
	return e.Version, true
}

// Store implements VersionCache; it also drops expired entries.
func (c *FileCache) Store(endpoint string, v version.Version) {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries := c.read()
	now := c.now()
	for k, e := range entries {
		if now.Sub(e.StoredAt) > c.ttl {
			delete(entries, k)
		}
	}
	entries[endpoint] = cacheEntry{Version: v, StoredAt: now}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".versions-*.json")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), c.path) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// read returns the file's entries; a missing or corrupt file is empty.
func (c *FileCache) read() map[string]cacheEntry {
	entries := map[string]cacheEntry{}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return entries
	}
	if json.Unmarshal(data, &entries) != nil {
		return map[string]cacheEntry{}
	}
	return entries
}

// MemoryCache is a VersionCache for one process (and for tests).
type MemoryCache struct {
	mu sync.Mutex
	m  map[string]version.Version
}

// NewMemoryCache returns an empty in-memory cache.
func NewMemoryCache() *MemoryCache { return &MemoryCache{m: map[string]version.Version{}} }

// Load implements VersionCache.
func (c *MemoryCache) Load(endpoint string) (version.Version, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[endpoint]
	return v, ok
}

// Store implements VersionCache.
func (c *MemoryCache) Store(endpoint string, v version.Version) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[endpoint] = v
}
