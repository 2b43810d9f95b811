package config

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Reloader re-reads a configuration on SIGHUP and applies the options
// declared reloadable through callbacks. A change to any other option is
// logged as needing a restart and not applied; an invalid new configuration
// is logged and the current one kept. It is safe for concurrent use.
type Reloader struct {
	src Source
	log *slog.Logger

	reloading sync.Mutex // serialises Reload, callbacks included
	mu        sync.Mutex // guards cur and subs
	cur       *Config
	subs      []subscription

	// listening, when set (by tests), is closed once Run receives signals.
	listening chan struct{}
}

type subscription struct {
	o  *Option
	fn func(*Config) error
}

// NewReloader returns a Reloader whose current configuration is cur (as
// loaded from src) and which re-reads src on Reload.
func NewReloader(src Source, cur *Config, log *slog.Logger) *Reloader {
	return &Reloader{src: src, cur: cur, log: log}
}

// OnChange registers fn, called with the new current configuration after a
// reload changed [section] option. It panics if the option is not declared
// or not reloadable: that is a programming error, not a configuration one.
func (r *Reloader) OnChange(section, option string, fn func(*Config)) {
	r.OnChangeOrKeep(section, option, func(c *Config) error { fn(c); return nil })
}

// OnChangeOrKeep is OnChange for a callback that may refuse the new value:
// when fn returns an error, the error is logged and the option keeps its
// running value, so the next reload tries the configured value again.
func (r *Reloader) OnChangeOrKeep(section, option string, fn func(*Config) error) {
	o, ok := Lookup(section, option)
	if !ok || !o.Reloadable {
		panic("config: OnChange on [" + section + "] " + option + ", which is not a reloadable option")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = append(r.subs, subscription{o: o, fn: fn})
}

// Current returns the configuration in effect. Callers must not modify it.
func (r *Reloader) Current() *Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// Reload re-reads the source now. When the new configuration is invalid it
// logs and returns the error and keeps the current one. Otherwise it applies
// the reloadable options that changed, calls their callbacks, and logs each
// other changed option as needing a restart.
func (r *Reloader) Reload() error {
	r.reloading.Lock()
	defer r.reloading.Unlock()
	next, err := r.src.Load()
	if err != nil {
		r.log.Error("configuration reload failed; keeping the current configuration", "error", err)
		return err
	}
	r.mu.Lock()
	cur, subs := r.cur, r.subs
	r.mu.Unlock()

	applied := cur.Clone()
	var changed []*Option
	for _, o := range declared.all {
		was, now := o.get(cur), o.get(next)
		if format(o.Kind, was) == format(o.Kind, now) {
			continue
		}
		if !o.Reloadable {
			r.log.Warn("configuration option changed; it needs a restart to take effect",
				"option", o.Key(), "running", o.display(was), "configured", o.display(now))
			continue
		}
		o.set(applied, now)
		changed = append(changed, o)
		r.log.Info("configuration option reloaded", "option", o.Key(), "old", o.display(was), "new", o.display(now))
	}
	r.mu.Lock()
	r.cur = applied
	r.mu.Unlock()
	// Callbacks run without the lock, so they may call Current.
	for _, o := range changed {
		for _, s := range subs {
			if s.o != o {
				continue
			}
			if err := s.fn(applied); err != nil {
				r.log.Error("configuration option refused; keeping the running value (send SIGHUP again once the cause is fixed)",
					"option", o.Key(), "running", o.display(o.get(cur)), "error", err)
				r.mu.Lock()
				kept := r.cur.Clone()
				o.set(kept, o.get(cur))
				r.cur = kept
				r.mu.Unlock()
				break
			}
		}
	}
	return nil
}

// Run reloads on every SIGHUP until ctx is done, then returns nil. Reload
// failures are logged, not returned: a bad edit must not stop a service.
func (r *Reloader) Run(ctx context.Context) error {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	defer signal.Stop(ch)
	if r.listening != nil {
		close(r.listening)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
			_ = r.Reload() // logged by Reload
		}
	}
}
