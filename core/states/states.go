package states

// State is a provision state, spelled as on Ironic's wire.
type State string

// Provision states.
const (
	Enroll        State = "enroll"
	Verifying     State = "verifying"
	Manageable    State = "manageable"
	Inspecting    State = "inspecting"
	InspectWait   State = "inspect wait"
	InspectFailed State = "inspect failed"
	Cleaning      State = "cleaning"
	CleanWait     State = "clean wait"
	CleanFailed   State = "clean failed"
	Available     State = "available"
	Deploying     State = "deploying"
	DeployWait    State = "wait call-back"
	DeployFailed  State = "deploy failed"
	Active        State = "active"
	Deleting      State = "deleting"
	Adopting      State = "adopting"
	AdoptFailed   State = "adopt failed"
	Error         State = "error"
	// The rescue states (API 1.38).
	Rescuing       State = "rescuing"
	RescueWait     State = "rescue wait"
	RescueFailed   State = "rescue failed"
	Rescue         State = "rescue"
	Unrescuing     State = "unrescuing"
	UnrescueFailed State = "unrescue failed"
	// The service states (API 1.87): an active node runs service steps
	// and returns to active.
	Servicing     State = "servicing"
	ServiceWait   State = "service wait"
	ServiceFailed State = "service failed"
	// ServiceHold: a service step named hold stopped the steps until
	// unhold (API 1.85) resumes them.
	ServiceHold State = "service hold"
)

// Event moves a node between states: a verb an API client asks for, or an
// internal event a conductor fires as work progresses.
type Event string

// Verbs (user-requested events).
const (
	Manage  Event = "manage"
	Provide Event = "provide"
	Inspect Event = "inspect"
	Clean   Event = "clean"
	Deploy  Event = "deploy"
	Rebuild Event = "rebuild"
	Delete  Event = "delete"
	Abort   Event = "abort"
	Adopt   Event = "adopt"
	// RescueEv and Unrescue are the rescue verbs (API 1.38); Unhold (1.85)
	// leaves a hold state (Rivet's machine has service hold; not yet clean
	// hold and deploy hold).
	RescueEv Event = "rescue"
	Unrescue Event = "unrescue"
	Unhold   Event = "unhold"
	// ServiceEv is the service verb (API 1.87).
	ServiceEv Event = "service"
)

// Internal events.
const (
	Done   Event = "done"
	Fail   Event = "fail"
	Wait   Event = "wait"
	Resume Event = "resume"
	// Hold is fired by a step named hold (service hold).
	Hold Event = "hold"
)

// AllStates lists every state, stable ones first.
var AllStates = []State{
	Enroll, Manageable, Available, Active, Error, InspectFailed, CleanFailed, DeployFailed, AdoptFailed,
	Verifying, Inspecting, InspectWait, Cleaning, CleanWait, Deploying, DeployWait, Deleting, Adopting,
	Rescue, RescueFailed, UnrescueFailed, Rescuing, RescueWait, Unrescuing,
	ServiceFailed, Servicing, ServiceWait, ServiceHold,
}

// AllEvents lists every event, verbs first.
var AllEvents = []Event{Manage, Provide, Inspect, Clean, Deploy, Rebuild, Delete, Abort, Adopt, RescueEv, Unrescue, Unhold, ServiceEv,
	Done, Fail, Wait, Resume, Hold}

// stable states are where nodes rest; failure states are stable too.
var stable = map[State]bool{
	Enroll: true, Manageable: true, Available: true, Active: true, Error: true,
	InspectFailed: true, CleanFailed: true, DeployFailed: true, AdoptFailed: true,
	Rescue: true, RescueFailed: true, UnrescueFailed: true, ServiceFailed: true,
}

// IsStable reports whether s is a resting state (no target).
func IsStable(s State) bool { return stable[s] }

// targets gives the target_provision_state of each transient state.
// Cleaning's target depends on why it runs (manual cleaning returns to
// manageable); Target returns the automated-cleaning default.
var targets = map[State]State{
	Verifying: Manageable, Inspecting: Manageable, InspectWait: Manageable,
	Cleaning: Available, CleanWait: Available,
	Deploying: Active, DeployWait: Active, Deleting: Available, Adopting: Active,
	Rescuing: Rescue, RescueWait: Rescue, Unrescuing: Active,
	Servicing: Active, ServiceWait: Active, ServiceHold: Active,
}

// Target returns the state a transient state is heading to, or "" for a
// stable one.
func Target(s State) State { return targets[s] }

// DeleteAllowed lists the states a node may be deleted in. Available is
// allowed too unless [conductor] allow_deleting_available_nodes is false.
var DeleteAllowed = map[State]bool{Manageable: true, Enroll: true, AdoptFailed: true, Available: true}

// StuckStates are the transient states a conductor moves to their failure
// state at start or takeover when no live conductor holds the node
// (Ironic's STUCK_STATES_TREATED_AS_FAIL).
var StuckStates = []State{Deploying, Cleaning, Verifying, Inspecting, Adopting, Rescuing, Unrescuing, Deleting, Servicing}

// UpdateAllowed lists the states where PATCH is allowed although the node
// has a target (Ironic's UPDATE_ALLOWED_STATES, less service): a node in
// service hold is held so that an operator can change it.
var UpdateAllowed = map[State]bool{
	DeployFailed: true, Inspecting: true, InspectFailed: true, InspectWait: true,
	CleanFailed: true, Error: true, Verifying: true, AdoptFailed: true,
	RescueFailed: true, UnrescueFailed: true, ServiceFailed: true, ServiceHold: true,
}

// expectsAgent are the states in which a ramdisk agent may run on the node
// and look it up (Ironic's LOOKUP_ALLOWED_STATES, less
// the hold states): an agent token is issued and honoured only in them.
var expectsAgent = map[State]bool{
	Deploying: true, DeployWait: true, Cleaning: true, CleanWait: true, Inspecting: true, InspectWait: true,
	Rescuing: true, RescueWait: true, ServiceWait: true,
}

// ExpectsAgent reports whether s is a state in which a ramdisk agent may
// look its node up and heartbeat.
func ExpectsAgent(s State) bool { return expectsAgent[s] }
