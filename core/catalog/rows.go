package catalog

import (
	"context"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/db"
)

// FromRows builds a catalog from conductor_hardware_interfaces rows, of
// one conductor or several (see New).
func FromRows(rows []db.ConductorHardwareInterface) *Catalog {
	offers := make([]Offer, len(rows))
	for i, r := range rows {
		offers[i] = Offer{HardwareType: r.HardwareType, Interface: r.InterfaceType, Name: r.InterfaceName, Default: r.IsDefault}
	}
	return New(offers)
}

// Rows returns c as conductor_hardware_interfaces rows (ConductorID unset):
// what a conductor registers.
func Rows(c *Catalog) []db.ConductorHardwareInterface {
	offers := c.Offers()
	out := make([]db.ConductorHardwareInterface, len(offers))
	for i, o := range offers {
		out[i] = db.ConductorHardwareInterface{HardwareType: o.HardwareType, InterfaceType: o.Interface,
			InterfaceName: o.Name, IsDefault: o.Default}
	}
	return out
}

// Cache keeps the catalog Load builds for TTL, so a busy API does not
// query the database on every request; 0 loads every time. A failed load
// is not cached. Safe for concurrent use.
type Cache struct {
	Load func(ctx context.Context) (*Catalog, error)
	TTL  time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	cur    *Catalog
	loaded time.Time
}

// Get returns the cached catalog, loading it when missing or older than TTL.
func (c *Cache) Get(ctx context.Context) (*Catalog, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.TTL > 0 && now().Sub(c.loaded) < c.TTL {
		return c.cur, nil
	}
	cat, err := c.Load(ctx)
	if err != nil {
		return nil, err
	}
	c.cur, c.loaded = cat, now()
	return cat, nil
}
