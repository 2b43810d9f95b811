package hashring

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// DefaultPartitionExponent matches Ironic's [DEFAULT] hash_partition_exponent.
const DefaultPartitionExponent = 5

// ErrEmpty is returned by Get on a ring with no hosts.
var ErrEmpty = errors.New("hash ring has no hosts")

type position struct {
	hash [md5.Size]byte
	host string
}

// Ring is an immutable consistent hash ring over host names.
type Ring struct {
	positions []position
	hosts     []string
}

// New builds a ring over hosts with 2^exponent partitions per host.
// Duplicate hosts are placed once.
func New(hosts []string, exponent int) (*Ring, error) {
	if exponent < 0 || exponent > 16 {
		return nil, fmt.Errorf("hash ring: partition exponent %d outside 0..16", exponent)
	}
	uniq := slices.Clone(hosts)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	parts := 1 << exponent
	r := &Ring{hosts: uniq, positions: make([]position, 0, len(uniq)*parts)}
	for _, host := range uniq {
		key := []byte(host)
		h := md5.New()
		h.Write(key)
		for range parts {
			h.Write(key)
			var p position
			copy(p.hash[:], h.Sum(nil)) // Sum leaves the running hash as it is, like hexdigest
			p.host = host
			r.positions = append(r.positions, p)
		}
	}
	// tooz keeps positions in a dict, so on an (astronomically unlikely)
	// collision the host added last wins; sorting by hash then host and
	// keeping the last of equal hashes reproduces that for sorted input.
	sort.SliceStable(r.positions, func(i, j int) bool {
		return bytes.Compare(r.positions[i].hash[:], r.positions[j].hash[:]) < 0
	})
	r.positions = slices.CompactFunc(r.positions, func(a, b position) bool { return a.hash == b.hash })
	return r, nil
}

// Hosts returns the ring's hosts, sorted.
func (r *Ring) Hosts() []string { return slices.Clone(r.hosts) }

// Get returns the host that owns key (for nodes: the UUID string's bytes).
func (r *Ring) Get(key []byte) (string, error) {
	if len(r.positions) == 0 {
		return "", ErrEmpty
	}
	k := md5.Sum(key)
	i := sort.Search(len(r.positions), func(i int) bool {
		return bytes.Compare(r.positions[i].hash[:], k[:]) > 0
	})
	if i == len(r.positions) {
		i = 0
	}
	return r.positions[i].host, nil
}
