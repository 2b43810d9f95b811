package conductor

import (
	"context"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/plugins"
)

// volumeDeleteStates are the provision states in which a volume connector
// or target may be deleted whatever the power state: Ironic's
// DELETE_ALLOWED_STATES (enroll, manageable, adopt failed).
var volumeDeleteStates = map[states.State]bool{states.Enroll: true, states.Manageable: true, states.AdoptFailed: true}

// errInvalidStateRequested is Ironic's InvalidStateRequested (400).
func errInvalidStateRequested(action string, n *objects.Node) *Error {
	state := "None"
	if n.PowerState != nil {
		state = *n.PowerState
	}
	return classed("InvalidStateRequested", http.StatusBadRequest, nil,
		"The requested action \"%s\" can not be performed on node \"%s\" while it is in state \"%s\".", action, n.UUID, state)
}

// poweredOff refuses a volume change on a node that is not powered off
// (Ironic's update_volume_connector / update_volume_target).
func poweredOff(action string) func(n *objects.Node, _ objects.Object, _ []string) error {
	return func(n *objects.Node, _ objects.Object, _ []string) error {
		if n.PowerState == nil || *n.PowerState != string(plugins.PowerOff) {
			return errInvalidStateRequested(action, n)
		}
		return nil
	}
}

// deletableVolume refuses a volume deletion on a node that is neither
// powered off nor in a state that allows deleting it.
func deletableVolume(action string) func(n *objects.Node, _ objects.Object) error {
	off := poweredOff(action)
	return func(n *objects.Node, _ objects.Object) error {
		if volumeDeleteStates[states.State(n.ProvisionState)] {
			return nil
		}
		return off(n, nil, nil)
	}
}

func (s *Service) updateVolumeConnector(ctx context.Context, p rpc.Params) (any, error) {
	vc, err := objectArg[*objects.VolumeConnector](p, "connector")
	if err != nil {
		return nil, err
	}
	return s.updateChildChecked(ctx, vc, vc.UUID, poweredOff("volume connector update"), func(cur objects.Object, err error) error {
		c := cur.(*objects.VolumeConnector)
		return classed("VolumeConnectorTypeAndIdAlreadyExists", http.StatusConflict, err,
			"A volume connector with type %s and connector ID %s already exists.", c.Type, c.ConnectorID)
	})
}

func (s *Service) destroyVolumeConnector(ctx context.Context, p rpc.Params) (any, error) {
	vc, err := objectArg[*objects.VolumeConnector](p, "connector")
	if err != nil {
		return nil, err
	}
	return s.destroyChild(ctx, "VolumeConnector", vc.UUID, deletableVolume("volume connector deletion"))
}

func (s *Service) updateVolumeTarget(ctx context.Context, p rpc.Params) (any, error) {
	vt, err := objectArg[*objects.VolumeTarget](p, "target")
	if err != nil {
		return nil, err
	}
	return s.updateChildChecked(ctx, vt, vt.UUID, poweredOff("volume target update"), func(cur objects.Object, err error) error {
		return classed("VolumeTargetBootIndexAlreadyExists", http.StatusConflict, err,
			"A volume target with boot index '%d' for the same node already exists.", cur.(*objects.VolumeTarget).BootIndex)
	})
}

func (s *Service) destroyVolumeTarget(ctx context.Context, p rpc.Params) (any, error) {
	vt, err := objectArg[*objects.VolumeTarget](p, "target")
	if err != nil {
		return nil, err
	}
	return s.destroyChild(ctx, "VolumeTarget", vt.UUID, deletableVolume("volume target deletion"))
}
