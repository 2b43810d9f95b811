package plugins

import "context"

// DeployPreparer prepares a node for deployment (for example attaches the
// deploy ramdisk through virtual media or sets PXE boot). It must be
// idempotent: the conductor calls it again after a retryable failure.
type DeployPreparer interface {
	PrepareDeploy(ctx context.Context, node Node) error
}

// Deployer deploys node.InstanceInfo's image and returns when the node is
// active or the deploy failed.
type Deployer interface {
	Deploy(ctx context.Context, node Node) error
}

// DeployTearDowner undoes a deploy (unprovision); it must succeed on a node
// that is already torn down.
type DeployTearDowner interface {
	TearDown(ctx context.Context, node Node) error
}

// StepPhase names where a step may run, as Ironic's clean_step,
// service_step and deploy_step decorators.
type StepPhase string

// Step phases.
const (
	PhaseClean   StepPhase = "clean"
	PhaseService StepPhase = "service"
	PhaseDeploy  StepPhase = "deploy"
)

// CleanStep is one step a driver offers, as in Ironic's get_clean_steps:
// for cleaning, and for servicing or deploying too when Phases says so.
type CleanStep struct {
	// Interface is the hardware interface that owns the step ("deploy").
	Interface Interface
	// Step is the step's name ("erase_devices").
	Step string
	// Priority orders automated cleaning; 0 disables the step there.
	Priority int
	// Abortable says whether the step may be interrupted.
	Abortable bool
	// Args holds the arguments for ExecuteCleanStep (manual cleaning).
	Args map[string]any
	// Phases lists where the step may run. Empty means PhaseClean only,
	// which is what a step of a plugin built before servicing means.
	// Priority orders automated cleaning only; a service step runs when
	// asked for.
	Phases []StepPhase
}

// RunsIn reports whether the step may run in phase p.
func (s CleanStep) RunsIn(p StepPhase) bool {
	if len(s.Phases) == 0 {
		return p == PhaseClean
	}
	for _, q := range s.Phases {
		if q == p {
			return true
		}
	}
	return false
}

// CleanStepLister lists the clean steps a node supports. Optional with the
// deploy interface; implementing it together with CleanStepExecutor
// advertises CapabilityCleanSteps.
type CleanStepLister interface {
	ListCleanSteps(ctx context.Context, node Node) ([]CleanStep, error)
}

// CleanStepExecutor runs one clean step synchronously. An unknown step is an
// error wrapping ErrNotSupported.
type CleanStepExecutor interface {
	ExecuteCleanStep(ctx context.Context, node Node, step CleanStep) error
}

// DeployInterface is the "deploy" hardware interface.
type DeployInterface interface {
	DeployPreparer
	Deployer
	DeployTearDowner
}
