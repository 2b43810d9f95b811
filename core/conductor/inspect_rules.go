package conductor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/inspectrules"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/traits"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
)

// applyInspectionRules is Ironic's apply_rules for the "main" phase, run
// after the inspection hooks and before the data is stored: the stored
// rules of the phase and the built-in ones of [inspection_rules]
// built_in_rules, highest priority first. Node changes are made on
// t.Node (saved when inspection finishes), port changes are saved at
// once, trait changes written at once; plugin-data actions change
// pluginData, which is stored after. While pinned to a release without
// inspection rules none runs.
func (s *Service) applyInspectionRules(ctx context.Context, t *Task, inventory, pluginData map[string]any) error {
	if _, ok := s.pinner.Effective().ObjectVersion("InspectionRule"); !ok {
		return nil
	}
	stored, err := s.store.InspectionRulesForPhase(ctx, inspectrules.PhaseMain)
	if err != nil {
		return err
	}
	builtIn, err := inspectrules.LoadBuiltIn(s.cfg.InspectionRules.BuiltInRules)
	if err != nil {
		return err
	}
	rules := make([]inspectrules.Rule, 0, len(stored)+len(builtIn))
	for _, r := range stored {
		rules = append(rules, inspectrules.Rule{UUID: r.UUID, Priority: r.Priority, Sensitive: r.Sensitive,
			Conditions: r.Conditions, Actions: r.Actions})
	}
	rules = append(rules, builtIn...)
	if len(rules) == 0 {
		return nil
	}
	env := &ruleEnv{ctx: ctx, s: s, t: t}
	if err := inspectrules.Apply(env, rules, inventory, pluginData, s.cfg.InspectionRules.MaskSecrets, t.Node.UUID); err != nil {
		return err
	}
	t.log.Info("inspection rules applied", "rules", len(rules))
	return nil
}

// ruleEnv is what inspection rules change: the task's node, its ports and
// traits.
type ruleEnv struct {
	ctx   context.Context
	s     *Service
	t     *Task
	ports []*objects.Port
}

func (e *ruleEnv) Node() inspectrules.Target {
	return &ruleTarget{reg: e.s.store.Registry(), obj: e.t.Node}
}

func (e *ruleEnv) Port(id string) (inspectrules.Target, error) {
	if e.ports == nil {
		objs, err := e.s.store.LoadAll(e.ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.node_id = ?", e.t.Node.ID)
		})
		if err != nil {
			return nil, err
		}
		e.ports = []*objects.Port{}
		for _, o := range objs {
			e.ports = append(e.ports, o.(*objects.Port))
		}
	}
	for _, p := range e.ports {
		if p.UUID == id {
			return &ruleTarget{reg: e.s.store.Registry(), obj: p, save: func() error { return e.s.store.Save(e.ctx, p) }}, nil
		}
	}
	return nil, &inspectrules.ExecError{Msg: fmt.Sprintf("Port %s could not be found.", id)}
}

func (e *ruleEnv) AddTrait(name string) error {
	if msg, _ := traits.Problem(name); msg != "" {
		return errors.New(msg)
	}
	return e.s.store.AddNodeTraits(e.ctx, e.t.Node.ID, []string{name})
}

func (e *ruleEnv) RemoveTrait(name string) (bool, error) {
	err := e.s.store.RemoveNodeTraits(e.ctx, e.t.Node.ID, []string{name})
	var nf *db.TraitNotFoundError
	if errors.As(err, &nf) {
		return false, nil
	}
	return err == nil, err
}

func (e *ruleEnv) Log(level, msg string) {
	l := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warning": slog.LevelWarn,
		"error": slog.LevelError, "critical": slog.LevelError}[level]
	e.t.log.Log(e.ctx, l, "inspection rule: "+msg)
}

// ruleFieldsFixed are the fields rules may not change: identity,
// timestamps, and the state and lease the conductor owns.
var ruleFieldsFixed = []string{"id", "uuid", "node_id", "created_at", "updated_at", "provision_state",
	"target_provision_state", "provision_updated_at", "reservation", "reservation_expires_at",
	"reservation_epoch", "conductor_affinity", "inspection_started_at", "inspection_finished_at"}

// ruleTarget is a node or port as a rule sees it: its fields as JSON
// values, set from JSON values.
type ruleTarget struct {
	reg  *objects.Registry
	obj  objects.Object
	save func() error // nil: saved by the caller
}

func (r *ruleTarget) Fields() map[string]any {
	vals, err := r.reg.Values(r.obj)
	if err != nil {
		return map[string]any{}
	}
	data, err := json.Marshal(vals)
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

func (r *ruleTarget) Set(field string, v any) error {
	if slices.Contains(ruleFieldsFixed, field) {
		return fmt.Errorf("%s cannot be changed by inspection rules", field)
	}
	cur, err := r.reg.Get(r.obj, field)
	if err != nil {
		return fmt.Errorf("'%s' object has no attribute '%s'", r.obj.Kind(), field)
	}
	typ := reflect.TypeOf(cur)
	nv := reflect.New(typ)
	data, err := json.Marshal(v)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // as maps read from the database hold numbers
		err = dec.Decode(nv.Interface())
	}
	if err != nil {
		return fmt.Errorf("%s cannot hold %s", field, inspectrules.PyStr(v))
	}
	if err := r.reg.Set(r.obj, field, nv.Elem().Interface()); err != nil {
		return err
	}
	if r.save != nil {
		return r.save()
	}
	return nil
}

func (r *ruleTarget) Reset(field string) error {
	if slices.Contains(ruleFieldsFixed, field) {
		return fmt.Errorf("%s cannot be changed by inspection rules", field)
	}
	cur, err := r.reg.Get(r.obj, field)
	if err != nil {
		return fmt.Errorf("'%s' object has no attribute '%s'", r.obj.Kind(), field)
	}
	zero := reflect.Zero(reflect.TypeOf(cur)).Interface()
	if reflect.TypeOf(cur).Kind() == reflect.Pointer {
		zero = nil
	}
	if err := r.reg.Set(r.obj, field, zero); err != nil {
		return err
	}
	if r.save != nil {
		return r.save()
	}
	return nil
}

// outOfBandInventory is an out-of-band inventory in the shape of the
// agent's, as Ironic's redfish inspection builds it for the rules: cpu
// (count, architecture), memory (physical_mb), interfaces (name,
// mac_address). Rivet's drivers report no disk list (only local_gb, which
// the rules see on the node's properties).
func outOfBandInventory(inv plugins.Inventory) map[string]any {
	nics := make([]any, len(inv.NICs))
	for i, n := range inv.NICs {
		nics[i] = map[string]any{"name": n.Name, "mac_address": n.MACAddress}
	}
	return map[string]any{
		"cpu":        map[string]any{"count": float64(inv.CPUs), "architecture": inv.CPUArch},
		"memory":     map[string]any{"physical_mb": float64(inv.MemoryMB)},
		"interfaces": nics,
	}
}
