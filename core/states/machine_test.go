package states

import (
	"errors"
	"net/http"
	"testing"
)

// want transcribes reference/ironic.md §10 (the rows for API 1.1–1.26) and
// Ironic's rescue (1.38) and service (1.87) transitions
// (ironic/common/state_machine.py): every
// (state, event) pair not listed here must be refused.
var want = map[State]map[Event]State{
	Enroll:         {Manage: Verifying},
	Verifying:      {Done: Manageable, Fail: Enroll},
	Manageable:     {Provide: Cleaning, Clean: Cleaning, Inspect: Inspecting, Adopt: Adopting},
	Cleaning:       {Done: Available, Fail: CleanFailed, Wait: CleanWait, Manage: Manageable},
	CleanWait:      {Resume: Cleaning, Fail: CleanFailed, Abort: CleanFailed},
	CleanFailed:    {Manage: Manageable},
	Available:      {Deploy: Deploying, Manage: Manageable},
	Deploying:      {Done: Active, Wait: DeployWait, Fail: DeployFailed},
	DeployWait:     {Resume: Deploying, Fail: DeployFailed, Abort: DeployFailed, Delete: Deleting},
	DeployFailed:   {Deploy: Deploying, Rebuild: Deploying, Delete: Deleting},
	Active:         {Rebuild: Deploying, Delete: Deleting, RescueEv: Rescuing, ServiceEv: Servicing},
	Deleting:       {Clean: Cleaning, Fail: Error},
	Error:          {Rebuild: Deploying, Delete: Deleting},
	Inspecting:     {Done: Manageable, Wait: InspectWait, Fail: InspectFailed},
	InspectWait:    {Done: Manageable, Resume: Inspecting, Fail: InspectFailed, Abort: InspectFailed},
	InspectFailed:  {Manage: Manageable, Inspect: Inspecting},
	Adopting:       {Done: Active, Fail: AdoptFailed},
	AdoptFailed:    {Adopt: Adopting, Manage: Manageable},
	Rescuing:       {Done: Rescue, Wait: RescueWait, Fail: RescueFailed},
	RescueWait:     {Resume: Rescuing, Fail: RescueFailed, Abort: RescueFailed, Delete: Deleting},
	Rescue:         {RescueEv: Rescuing, Unrescue: Unrescuing, Delete: Deleting},
	RescueFailed:   {RescueEv: Rescuing, Unrescue: Unrescuing, Delete: Deleting},
	Unrescuing:     {Done: Active, Fail: UnrescueFailed},
	UnrescueFailed: {RescueEv: Rescuing, Unrescue: Unrescuing, Delete: Deleting},
	Servicing:      {Done: Active, Fail: ServiceFailed, Wait: ServiceWait, Hold: ServiceHold},
	ServiceWait:    {Resume: Servicing, Fail: ServiceFailed, Abort: ServiceFailed, Delete: Deleting, Hold: ServiceHold},
	ServiceFailed:  {ServiceEv: Servicing, RescueEv: Rescuing, Wait: ServiceWait, Delete: Deleting, Abort: Active, Hold: ServiceHold},
	ServiceHold:    {ServiceEv: Servicing, Unhold: ServiceWait, Fail: ServiceFailed, Abort: ServiceFailed},
}

func TestEveryStateEventPair(t *testing.T) {
	for _, s := range AllStates {
		for _, e := range AllEvents {
			t.Run(string(s)+"/"+string(e), func(t *testing.T) {
				got, err := Next("n1", s, e)
				to, ok := want[s][e]
				if ok {
					if err != nil || got != to {
						t.Fatalf("Next(%s, %s) = %q, %v; want %q", s, e, got, err, to)
					}
					return
				}
				var ite *InvalidTransitionError
				if !errors.As(err, &ite) || ite.HTTPCode() != http.StatusBadRequest {
					t.Fatalf("Next(%s, %s) = %q, %v; want InvalidStateRequested", s, e, got, err)
				}
			})
		}
	}
}

func TestStableAndTargets(t *testing.T) {
	for _, s := range AllStates {
		if IsStable(s) == (Target(s) != "") {
			t.Errorf("%s: stable=%v but target %q", s, IsStable(s), Target(s))
		}
		if _, ok := want[s]; !ok {
			t.Errorf("%s has no transitions: nodes would be stranded there", s)
		}
	}
	for _, s := range StuckStates {
		if _, err := Next("n", s, Fail); err != nil {
			t.Errorf("stuck state %s cannot fail: %v", s, err)
		}
	}
}

// The lifecycle Ironic 21.4 walked with fake-hardware (§10.1).
func TestMinimalLifecycle(t *testing.T) {
	s := Enroll
	for _, e := range []Event{Manage, Done, Provide, Done, Deploy, Done, Delete, Clean, Done} {
		next, err := Next("n1", s, e)
		if err != nil {
			t.Fatalf("%s --%s-->: %v", s, e, err)
		}
		s = next
	}
	if s != Available {
		t.Fatalf("lifecycle ended in %s", s)
	}
}

func TestErrorMessageIsIronics(t *testing.T) {
	_, err := Next("n1", Active, Provide)
	const msg = `The requested action "provide" can not be performed on node "n1" while it is in state "active".`
	if err == nil || err.Error() != msg {
		t.Fatalf("got %v\nwant %s", err, msg)
	}
}

func TestVerbs(t *testing.T) {
	// deploy and undeploy (1.73) are aliases of active and deleted; the
	// API gates each verb by version.
	for verb, ev := range map[string]Event{"active": Deploy, "deleted": Delete, "manage": Manage, "abort": Abort,
		"deploy": Deploy, "undeploy": Delete, "rescue": RescueEv, "unrescue": Unrescue, "unhold": Unhold,
		"service": ServiceEv} {
		if got, ok := VerbEvent(verb); !ok || got != ev {
			t.Errorf("VerbEvent(%q) = %q, %v", verb, got, ok)
		}
	}
	if _, ok := VerbEvent("unservice"); ok {
		t.Error(`"unservice" is no Ironic verb; it must not map`)
	}
}

// TestRescueTransitions follows Ironic's rescue states: active → rescuing
// → rescue (or rescue wait, rescue failed), back by unrescuing.
func TestRescueTransitions(t *testing.T) {
	steps := []struct {
		from State
		ev   Event
		to   State
	}{
		{Active, RescueEv, Rescuing}, {Rescuing, Wait, RescueWait}, {RescueWait, Resume, Rescuing},
		{Rescuing, Done, Rescue}, {Rescue, Unrescue, Unrescuing}, {Unrescuing, Done, Active},
		{Rescuing, Fail, RescueFailed}, {RescueFailed, Unrescue, Unrescuing}, {Unrescuing, Fail, UnrescueFailed},
		{UnrescueFailed, RescueEv, Rescuing}, {RescueWait, Abort, RescueFailed}, {Rescue, Delete, Deleting},
	}
	for _, s := range steps {
		if got, err := Next("n", s.from, s.ev); err != nil || got != s.to {
			t.Errorf("%s --%s--> %q, %v; want %s", s.from, s.ev, got, err, s.to)
		}
	}
	if _, err := Next("n", Available, RescueEv); err == nil {
		t.Error("available nodes cannot be rescued")
	}
	if Target(Rescuing) != Rescue || Target(Unrescuing) != Active || !IsStable(Rescue) {
		t.Error("rescue targets or stability wrong")
	}
}

// TestServiceTransitions follows Ironic's service states (1.87): active →
// servicing → active, or service failed, from which the service verb
// retries and abort returns the node to active.
func TestServiceTransitions(t *testing.T) {
	path := []struct {
		from State
		ev   Event
		to   State
	}{
		{Active, ServiceEv, Servicing}, {Servicing, Wait, ServiceWait}, {ServiceWait, Resume, Servicing},
		{Servicing, Fail, ServiceFailed}, {ServiceFailed, ServiceEv, Servicing}, {Servicing, Done, Active},
		{ServiceFailed, Abort, Active}, {ServiceWait, Abort, ServiceFailed},
	}
	for _, p := range path {
		if got, err := Next("n1", p.from, p.ev); err != nil || got != p.to {
			t.Errorf("%s --%s--> %q, %v; want %s", p.from, p.ev, got, err, p.to)
		}
	}
	if Target(Servicing) != Active || Target(ServiceWait) != Active || !IsStable(ServiceFailed) {
		t.Errorf("targets: servicing %q, service wait %q, service failed stable %v", Target(Servicing), Target(ServiceWait), IsStable(ServiceFailed))
	}
	if !ExpectsAgent(ServiceWait) || ExpectsAgent(Servicing) {
		t.Error("an agent looks its node up in service wait only")
	}
	if _, err := Next("n1", Manageable, ServiceEv); err == nil {
		t.Error("service from manageable must be refused")
	}
}
