package conductor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/redact"
)

// Bounds of a driver's Validate. A validate of power or management reaches
// the BMC; validateDeadline keeps a dead BMC from holding the API request,
// and validateCacheTTL keeps a storm of validate calls on one node (a
// client polling it, a script over many nodes behind one BMC) from
// hammering the BMC: the answer for the same node, interface and
// driver_info/instance_info is reused that long, and concurrent callers
// share one call.
const (
	validateDeadline = 10 * time.Second
	validateCacheTTL = 15 * time.Second
)

// validationCache remembers recent driver Validate answers. The zero value
// is ready.
type validationCache struct {
	mu      sync.Mutex
	entries map[string]*validationEntry
	now     func() time.Time // nil: time.Now
}

type validationEntry struct {
	done    chan struct{}
	result  validation
	expires time.Time
}

func (c *validationCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// validation is a driver's answer; handled is false when the driver had
// none to give (no Validate).
type validation struct {
	v       rpc.InterfaceValidation
	handled bool
}

// do returns the cached answer for key, waits for one in flight, or runs
// fn and caches what it answers.
func (c *validationCache) do(ctx context.Context, key string, fn func() validation) validation {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*validationEntry{}
	}
	now := c.clock()
	for k, e := range c.entries { // drop expired answers; the map stays small
		if !e.expires.IsZero() && now.After(e.expires) {
			delete(c.entries, k)
		}
	}
	if e, ok := c.entries[key]; ok {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.result
		case <-ctx.Done():
			return validation{notOK("validation was interrupted: %v", ctx.Err()), true}
		}
	}
	e := &validationEntry{done: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()
	e.result = fn()
	c.mu.Lock()
	e.expires = c.clock().Add(validateCacheTTL)
	c.mu.Unlock()
	close(e.done)
	return e.result
}

// validationKey identifies a validation: the node, its driver, the
// interface and a hash of what the driver reads (driver_info and
// instance_info). Editing the node changes the key, so a fixed password
// is checked again at once.
func validationKey(n *objects.Node, iface plugins.Interface) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(n.DriverInfo) // maps encode with sorted keys
	_ = enc.Encode(n.InstanceInfo)
	return n.UUID + "|" + n.Driver + "|" + string(iface) + "|" + hex.EncodeToString(h.Sum(nil))
}

// driverValidate asks the node's driver to validate iface (bounded and
// cached). handled is false when the driver has no Validate (a plugin
// built with an older SDK, an in-process driver without one): the caller
// then applies the conductor's own checks.
func (s *Service) driverValidate(ctx context.Context, n *objects.Node, hw Hardware, iface plugins.Interface) (rpc.InterfaceValidation, bool) {
	val, isValidator := hw.(plugins.Validator)
	if !isValidator {
		return ok(), false
	}
	r := s.validations.do(ctx, validationKey(n, iface), func() validation {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), validateDeadline)
		defer cancel()
		err := val.Validate(cctx, pluginNode(n), iface)
		switch {
		case errors.Is(err, plugins.ErrNotSupported):
			return validation{ok(), false}
		case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
			return validation{notOK("BMC unreachable: no answer within %s", validateDeadline), true}
		}
		return validation{validationResult(n, err), true}
	})
	return r.v, r.handled
}

// validationResult turns a driver's Validate error into the API's reason,
// leading with what kind of problem it is, scrubbed of secret values.
func validationResult(n *objects.Node, err error) rpc.InterfaceValidation {
	if err == nil {
		return ok()
	}
	var lead string
	switch plugins.ClassifyValidation(err) {
	case plugins.ProblemUnreachable:
		lead = "BMC unreachable"
	case plugins.ProblemCredentialsRefused:
		lead = "BMC refused the credentials"
	case plugins.ProblemWrongSystemID:
		lead = "wrong system id"
	}
	msg := scrubSecrets(n, err.Error())
	if lead != "" && !strings.HasPrefix(msg, lead) {
		msg = lead + ": " + msg
	}
	// Only keys missing: Ironic's message for that.
	var verr *host.ValidationError
	var dierr *plugins.InvalidDriverInfoError
	var missing, invalid []string
	switch {
	case errors.As(err, &verr) && verr.Problem == plugins.ProblemInvalidDriverInfo:
		missing, invalid = verr.Missing, verr.Invalid
	case plugins.ClassifyValidation(err) == plugins.ProblemInvalidDriverInfo && errors.As(err, &dierr):
		missing, invalid = dierr.Missing, dierr.Invalid
	}
	if len(missing) > 0 && len(invalid) == 0 {
		msg = "Some parameters were missing in node's driver_info: " + strings.Join(missing, ", ")
	}
	return notOK("%s", msg)
}

// scrubSecrets masks, in a driver's message, every secret value of the
// node's driver_info and any URL credentials.
func scrubSecrets(n *objects.Node, msg string) string {
	var secrets []string
	for k, v := range n.DriverInfo {
		if s, ok := v.(string); ok && len(s) >= 3 && plugins.IsSecretKey(k) {
			secrets = append(secrets, s)
		}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, plugins.Masked)
	}
	return redact.Text(msg)
}

// checkImageRefs checks every image reference n's instance_info and
// driver_info carry (boot_iso, kernel, deploy_kernel, …), as Ironic's
// image services take them.
func checkImageRefs(n *objects.Node, iface string) rpc.InterfaceValidation {
	for _, src := range []struct {
		field string
		m     map[string]any
	}{{"instance_info", n.InstanceInfo}, {"driver_info", n.DriverInfo}} {
		for _, k := range plugins.ImageRefKeys {
			v, present := src.m[k]
			if !present || v == nil {
				continue
			}
			s, isString := v.(string)
			if !isString {
				return notOK("Cannot validate %s interface: %s %s must be a string (a URL or an image id)", iface, src.field, k)
			}
			if strings.TrimSpace(s) == "" {
				continue
			}
			if err := plugins.CheckImageRef(s); err != nil {
				return notOK("Cannot validate %s interface: %s %s is not a valid image reference: %v", iface, src.field, k, err)
			}
		}
	}
	return ok()
}
