package powersync

// listing holds a cycle's nodes compactly: a 20-byte entry per node, its
// strings (UUID, name, BMC key, recorded power state) copied one after the
// other into shared immutable chunks. A Node made from an entry shares the
// chunk's memory, so building one allocates nothing. With 100,000 nodes, a
// []Node (72 bytes each plus a string allocation per UUID and name) was
// most of what a conductor held during a cycle, and, with the Go heap's
// headroom, twice that in resident memory.
type listing struct {
	chunks []string // sealed chunks
	buf    []byte   // the chunk being filled
	ents   []entry
	big    []Node // nodes with a string too long for an entry's lengths
}

// entry is one listed node: where its strings are and its flags.
type entry struct {
	chunk uint32
	off   uint32 // the UUID's offset in the chunk; the other strings follow it
	// lens are the lengths of the UUID, the name, the BMC key and the
	// power state, or powerOnLen/powerOffLen for the two usual states.
	lens  [4]uint16
	flags uint8
}

const (
	flagMaintenance = 1 << iota
	flagLocked
	flagBig // off indexes listing.big
)

// chunkSize is the size of the chunks strings are copied into: large
// enough that their count stays small, small enough that a Node kept past
// its cycle (a failure count, a log) keeps little else alive.
const chunkSize = 32 << 10

// The power state lengths that stand for the usual states, which are
// then not copied.
const (
	powerOnLen  = 0xffff
	powerOffLen = 0xfffe
	maxLen      = 0xfffd
)

const (
	statePowerOn  = "power on"
	statePowerOff = "power off"
)

// add appends n to the listing.
func (l *listing) add(n Node) {
	var e entry
	if n.Maintenance {
		e.flags |= flagMaintenance
	}
	if n.Locked {
		e.flags |= flagLocked
	}
	var pl uint16
	switch n.PowerState {
	case statePowerOn:
		pl = powerOnLen
	case statePowerOff:
		pl = powerOffLen
	default:
		pl = uint16(min(len(n.PowerState), maxLen))
	}
	if max(len(n.UUID), len(n.Name), len(n.BMC)) > maxLen || (pl == maxLen && len(n.PowerState) > maxLen) {
		e.flags |= flagBig
		e.off = uint32(len(l.big))
		l.big = append(l.big, n)
		l.ents = append(l.ents, e)
		return
	}
	need := len(n.UUID) + len(n.Name) + len(n.BMC)
	if pl <= maxLen {
		need += int(pl)
	}
	if len(l.buf) > 0 && len(l.buf)+need > chunkSize {
		l.seal()
	}
	if l.buf == nil {
		l.buf = make([]byte, 0, max(chunkSize, need))
	}
	e.chunk, e.off = uint32(len(l.chunks)), uint32(len(l.buf))
	e.lens = [4]uint16{uint16(len(n.UUID)), uint16(len(n.Name)), uint16(len(n.BMC)), pl}
	l.buf = append(l.buf, n.UUID...)
	l.buf = append(l.buf, n.Name...)
	l.buf = append(l.buf, n.BMC...)
	if pl <= maxLen {
		l.buf = append(l.buf, n.PowerState...)
	}
	l.ents = append(l.ents, e)
}

// seal turns the chunk being filled into an immutable one; the next add
// starts another. The listing is complete once sealed.
func (l *listing) seal() {
	if len(l.buf) > 0 {
		l.chunks = append(l.chunks, string(l.buf))
		l.buf = l.buf[:0]
	}
}

func (l *listing) len() int { return len(l.ents) }

// uuid is node i's UUID without building the rest of the node.
func (l *listing) uuid(i int32) string {
	e := &l.ents[i]
	if e.flags&flagBig != 0 {
		return l.big[e.off].UUID
	}
	return l.chunks[e.chunk][e.off : e.off+uint32(e.lens[0])]
}

// bmc is node i's BMC key.
func (l *listing) bmc(i int32) string {
	e := &l.ents[i]
	if e.flags&flagBig != 0 {
		return l.big[e.off].BMC
	}
	start := e.off + uint32(e.lens[0]) + uint32(e.lens[1])
	return l.chunks[e.chunk][start : start+uint32(e.lens[2])]
}

// id is node i's BMC identity (see bmcID).
func (l *listing) id(i int32) bmcID {
	if b := l.bmc(i); b != "" {
		return bmcID{bmc: b}
	}
	return bmcID{node: l.uuid(i)}
}

func (l *listing) maintenance(i int32) bool { return l.ents[i].flags&flagMaintenance != 0 }
func (l *listing) locked(i int32) bool      { return l.ents[i].flags&flagLocked != 0 }

// node builds node i; its strings share the listing's chunks.
func (l *listing) node(i int32) Node {
	e := &l.ents[i]
	if e.flags&flagBig != 0 {
		return l.big[e.off]
	}
	s := l.chunks[e.chunk]
	off := e.off
	next := func(n uint16) string {
		v := s[off : off+uint32(n)]
		off += uint32(n)
		return v
	}
	n := Node{UUID: next(e.lens[0]), Name: next(e.lens[1]), BMC: next(e.lens[2]),
		Maintenance: e.flags&flagMaintenance != 0, Locked: e.flags&flagLocked != 0}
	switch e.lens[3] {
	case powerOnLen:
		n.PowerState = statePowerOn
	case powerOffLen:
		n.PowerState = statePowerOff
	default:
		n.PowerState = next(e.lens[3])
	}
	return n
}
