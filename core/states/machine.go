package states

import (
	"fmt"
	"net/http"
	"slices"
)

// transitions is the table: from state, on event, to state.
var transitions = map[State]map[Event]State{
	Enroll:        {Manage: Verifying},
	Verifying:     {Done: Manageable, Fail: Enroll},
	Manageable:    {Provide: Cleaning, Clean: Cleaning, Inspect: Inspecting, Adopt: Adopting},
	Cleaning:      {Done: Available, Fail: CleanFailed, Wait: CleanWait, Manage: Manageable},
	CleanWait:     {Resume: Cleaning, Fail: CleanFailed, Abort: CleanFailed},
	CleanFailed:   {Manage: Manageable},
	Available:     {Deploy: Deploying, Manage: Manageable},
	Deploying:     {Done: Active, Wait: DeployWait, Fail: DeployFailed},
	DeployWait:    {Resume: Deploying, Fail: DeployFailed, Abort: DeployFailed, Delete: Deleting},
	DeployFailed:  {Deploy: Deploying, Rebuild: Deploying, Delete: Deleting},
	Active:        {Rebuild: Deploying, Delete: Deleting, RescueEv: Rescuing, ServiceEv: Servicing},
	Deleting:      {Clean: Cleaning, Fail: Error},
	Error:         {Rebuild: Deploying, Delete: Deleting},
	Inspecting:    {Done: Manageable, Wait: InspectWait, Fail: InspectFailed},
	InspectWait:   {Done: Manageable, Resume: Inspecting, Fail: InspectFailed, Abort: InspectFailed},
	InspectFailed: {Manage: Manageable, Inspect: Inspecting},
	Adopting:      {Done: Active, Fail: AdoptFailed},
	AdoptFailed:   {Adopt: Adopting, Manage: Manageable},
	// Rescue (API 1.38), as Ironic's machine.
	Rescuing:       {Done: Rescue, Wait: RescueWait, Fail: RescueFailed},
	RescueWait:     {Resume: Rescuing, Fail: RescueFailed, Abort: RescueFailed, Delete: Deleting},
	Rescue:         {RescueEv: Rescuing, Unrescue: Unrescuing, Delete: Deleting},
	RescueFailed:   {RescueEv: Rescuing, Unrescue: Unrescuing, Delete: Deleting},
	Unrescuing:     {Done: Active, Fail: UnrescueFailed},
	UnrescueFailed: {RescueEv: Rescuing, Unrescue: Unrescuing, Delete: Deleting},
	// Servicing (API 1.87), as Ironic's machine: aborting a failed
	// service returns the node to active; a hold step holds the node
	// until unhold (1.85) or service with new steps.
	Servicing:     {Done: Active, Fail: ServiceFailed, Wait: ServiceWait, Hold: ServiceHold},
	ServiceWait:   {Resume: Servicing, Fail: ServiceFailed, Abort: ServiceFailed, Delete: Deleting, Hold: ServiceHold},
	ServiceFailed: {ServiceEv: Servicing, RescueEv: Rescuing, Wait: ServiceWait, Delete: Deleting, Abort: Active, Hold: ServiceHold},
	ServiceHold:   {ServiceEv: Servicing, Unhold: ServiceWait, Fail: ServiceFailed, Abort: ServiceFailed},
}

// InvalidTransitionError is Ironic's InvalidStateRequested (HTTP 400).
type InvalidTransitionError struct {
	Action string // the verb as the client spelled it
	Node   string
	State  State
}

func (e *InvalidTransitionError) Error() string {
	return fmt.Sprintf("The requested action %q can not be performed on node %q while it is in state %q.", e.Action, e.Node, e.State)
}

// ErrorClass implements rpc.Classed.
func (e *InvalidTransitionError) ErrorClass() string { return "InvalidStateRequested" }

// HTTPCode implements rpc.Classed.
func (e *InvalidTransitionError) HTTPCode() int { return http.StatusBadRequest }

// Next returns the state event leads to from s, or an
// *InvalidTransitionError naming node.
func Next(node string, s State, e Event) (State, error) {
	if to, ok := transitions[s][e]; ok {
		return to, nil
	}
	return "", &InvalidTransitionError{Action: string(e), Node: node, State: s}
}

// Actionable lists the events possible from s, sorted.
func Actionable(s State) []Event {
	out := make([]Event, 0, len(transitions[s]))
	for e := range transitions[s] {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// verbs maps the API's provision targets to events ("active" deploys,
// "deleted" tears down), as Ironic's PUT .../states/provision.
var verbs = map[string]Event{
	"manage": Manage, "provide": Provide, "inspect": Inspect, "clean": Clean,
	"active": Deploy, "rebuild": Rebuild, "deleted": Delete, "abort": Abort, "adopt": Adopt,
	"rescue": RescueEv, "unrescue": Unrescue, "deploy": Deploy, "undeploy": Delete, "unhold": Unhold,
	"service": ServiceEv,
}

// VerbEvent returns the event for an API provision target.
func VerbEvent(verb string) (Event, bool) {
	e, ok := verbs[verb]
	return e, ok
}
