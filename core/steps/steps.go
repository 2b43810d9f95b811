package steps

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// ReservedNames are Ironic's reserved step names (conductor/steps.py):
// flow steps the conductor runs itself, whatever interface a step names.
var ReservedNames = []string{"power_on", "power_off", "reboot", "hold", "wait"}

// Reserved reports whether a step name is one of ReservedNames.
func Reserved(name string) bool { return slices.Contains(ReservedNames, name) }

// DeployInterfaces are the interfaces a deploy step (or a deploy
// template's step) may name, highest tie-break priority first: when two
// steps have the same priority, the step of the interface listed first
// runs first.
var DeployInterfaces = []string{"vendor", "power", "management", "firmware", "deploy", "bios", "raid"}

// CleanInterfaces are the interfaces a clean step (or a runbook's step)
// may name, highest tie-break priority first.
var CleanInterfaces = []string{"vendor", "power", "management", "firmware", "deploy", "bios", "raid"}

// InterfacePriority is the tie-break priority of iface among interfaces
// (DeployInterfaces or CleanInterfaces): higher runs first; 0 for an
// interface not listed.
func InterfacePriority(interfaces []string, iface string) int {
	i := slices.Index(interfaces, iface)
	if i < 0 {
		return 0
	}
	return len(interfaces) - i
}

// Step is one deploy step: an interface's method with its arguments, run
// in descending Priority (0: not run unless asked for).
type Step struct {
	Interface string         `json:"interface"`
	Step      string         `json:"step"`
	Args      map[string]any `json:"args"`
	Priority  int            `json:"priority"`
}

// Key identifies a step by interface and name, as Ironic compares steps.
func (s Step) Key() [2]string { return [2]string{s.Interface, s.Step} }

// Map returns the step as the document Ironic stores in
// driver_internal_info.deploy_steps.
func (s Step) Map() map[string]any {
	args := s.Args
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"interface": s.Interface, "step": s.Step, "args": args, "priority": s.Priority}
}

// FromMap reads a stored step document ({"interface", "step", "args",
// "priority"}; the priority a number or a string of digits).
func FromMap(m map[string]any) (Step, error) {
	st := Step{}
	st.Interface, _ = m["interface"].(string)
	st.Step, _ = m["step"].(string)
	st.Args, _ = m["args"].(map[string]any)
	if st.Args == nil {
		st.Args = map[string]any{}
	}
	var err error
	switch p := m["priority"].(type) {
	case json.Number:
		var n int64
		n, err = p.Int64()
		st.Priority = int(n)
	case float64:
		st.Priority = int(p)
	case int:
		st.Priority = p
	case int64:
		st.Priority = int(p)
	case string:
		st.Priority, err = strconv.Atoi(p)
	default:
		err = fmt.Errorf("priority %v is not a number", m["priority"])
	}
	if st.Interface == "" || st.Step == "" || err != nil {
		return Step{}, &InvalidError{Msg: fmt.Sprintf("invalid step %v: %v", m, err)}
	}
	return st, nil
}

// InvalidError is a step problem the client caused (Ironic's
// InvalidParameterValue).
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }
