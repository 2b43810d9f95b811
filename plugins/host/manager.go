package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// ErrUnknownHardwareType is returned by Manager.Driver for a hardware type
// no running plugin serves.
var ErrUnknownHardwareType = errors.New("no driver plugin serves this hardware type")

// Manager runs every discovered plugin and routes calls by hardware type.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu      sync.RWMutex
	sups    map[string]*supervisor // running, by driver name
	byHW    map[string]*supervisor // by hardware type
	refused map[string]error       // by driver name
	pending map[string]*supervisor // refused, retried when their binary changes

	stop chan struct{}
	wg   sync.WaitGroup
}

// New validates cfg and returns a Manager that has started nothing yet.
func New(cfg Config) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Manager{
		cfg: cfg, log: cfg.Logger,
		sups: map[string]*supervisor{}, byHW: map[string]*supervisor{},
		refused: map[string]error{}, pending: map[string]*supervisor{},
		stop: make(chan struct{}),
	}, nil
}

// Start discovers the plugins, starts and negotiates each one, and registers
// the hardware types of those that succeed. A plugin that fails (no version
// overlap, bad checksum, crash at start) is logged with the reason, listed
// by Refused, and skipped: Start fails only when discovery itself does.
func (m *Manager) Start(ctx context.Context) error {
	srcs, err := Discover(m.cfg)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		sup := newSupervisor(m.cfg, src)
		m.admit(ctx, sup)
	}
	if m.cfg.WatchInterval > 0 {
		m.wg.Add(1)
		go m.watch()
	}
	return nil
}

// admit starts sup's plugin and registers its hardware types, or records
// why it was refused and keeps it pending.
func (m *Manager) admit(ctx context.Context, sup *supervisor) {
	inst, err := sup.acquire(ctx)
	if err != nil {
		m.log.Error("driver plugin refused; its hardware types are not registered", "driver", sup.src.Driver, "path", sup.src.Path, "error", err)
		m.mu.Lock()
		m.refused[sup.src.Driver] = err
		m.pending[sup.src.Driver] = sup
		m.mu.Unlock()
		return
	}
	inst.inflight.Done()
	m.register(sup, inst.reg)
}

func (m *Manager) register(sup *supervisor, reg Registration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.refused, reg.Driver)
	delete(m.pending, reg.Driver)
	m.sups[reg.Driver] = sup
	for _, hw := range reg.HardwareTypes {
		if other, ok := m.byHW[hw]; ok && other != sup {
			m.log.Warn("hardware type served by two drivers; keeping the first", "hardware_type", hw, "kept", other.src.Driver, "ignored", reg.Driver)
			continue
		}
		m.byHW[hw] = sup
	}
}

// Driver returns the handle for a hardware type.
func (m *Manager) Driver(hardwareType string) (*Driver, error) {
	m.mu.RLock()
	sup, ok := m.byHW[hardwareType]
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("hardware type %q: %w", hardwareType, ErrUnknownHardwareType)
	}
	return &Driver{sup: sup, hardwareType: hardwareType}, nil
}

// Registrations returns what was negotiated with each running plugin,
// sorted by driver name. A plugin between a crash and its restart is absent.
func (m *Manager) Registrations() []Registration {
	m.mu.RLock()
	names := slices.Sorted(maps.Keys(m.sups))
	sups := make([]*supervisor, len(names))
	for i, n := range names {
		sups[i] = m.sups[n]
	}
	m.mu.RUnlock()
	var out []Registration
	for _, s := range sups {
		if r, ok := s.registration(); ok {
			out = append(out, r)
		}
	}
	return out
}

// ByHardwareType returns, for each registered hardware type, what was
// negotiated with the plugin serving it: what the conductor records so the
// API and operators can see each hardware type's versions and capabilities.
func (m *Manager) ByHardwareType() map[string]Registration {
	m.mu.RLock()
	byHW := maps.Clone(m.byHW)
	m.mu.RUnlock()
	out := make(map[string]Registration, len(byHW))
	for hw, s := range byHW {
		if r, ok := s.registration(); ok {
			out[hw] = r
		}
	}
	return out
}

// Refused returns, by driver name, why each refused plugin was refused.
func (m *Manager) Refused() map[string]error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return maps.Clone(m.refused)
}

// watch polls plugin binaries: it swaps replaced ones and retries refused
// ones whose binary changed.
func (m *Manager) watch() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.WatchInterval)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-m.stop; cancel() }()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.mu.RLock()
		sups := slices.Collect(maps.Values(m.sups))
		pending := slices.Collect(maps.Values(m.pending))
		m.mu.RUnlock()
		for _, s := range pending {
			if s.binaryChanged() {
				m.log.Info("refused driver plugin binary changed; trying it again", "driver", s.src.Driver)
				m.admit(ctx, s)
			}
		}
		for _, s := range sups {
			if s.swapIfChanged(ctx) {
				if reg, ok := s.registration(); ok {
					m.register(s, reg)
				}
			}
		}
	}
}

// Close stops the watch and kills every plugin process.
func (m *Manager) Close() {
	select {
	case <-m.stop:
		return
	default:
		close(m.stop)
	}
	m.wg.Wait()
	m.mu.RLock()
	sups := append(slices.Collect(maps.Values(m.sups)), slices.Collect(maps.Values(m.pending))...)
	m.mu.RUnlock()
	for _, s := range sups {
		s.close()
	}
}
