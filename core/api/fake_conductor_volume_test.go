package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
)

// The volume methods of the fake conductor refuse what
// core/conductor/volume_handlers.go refuses, with the same classes.

func (f *fakeConductor) volumeState(action string, n *objects.Node, deletion bool) error {
	if deletion && (n.ProvisionState == string(states.Enroll) || n.ProvisionState == string(states.Manageable) ||
		n.ProvisionState == string(states.AdoptFailed)) {
		return nil
	}
	if n.PowerState == nil || *n.PowerState != "power off" {
		state := "None"
		if n.PowerState != nil {
			state = *n.PowerState
		}
		return &rpc.RemoteError{Class: "InvalidStateRequested", Code: http.StatusBadRequest,
			Message: fmt.Sprintf("The requested action \"%s\" can not be performed on node \"%s\" while it is in state \"%s\".", action, n.UUID, state)}
	}
	return nil
}

func (f *fakeConductor) UpdateVolumeConnector(ctx context.Context, n *objects.Node, vc *objects.VolumeConnector) (*objects.VolumeConnector, error) {
	f.record("update_volume_connector")
	if err := f.locked(n); err != nil {
		return nil, err
	}
	if err := f.volumeState("volume connector update", n, false); err != nil {
		return nil, err
	}
	if err := f.store.Save(ctx, vc); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, &rpc.RemoteError{Class: "VolumeConnectorTypeAndIdAlreadyExists", Code: http.StatusConflict,
				Message: fmt.Sprintf("A volume connector with type %s and connector ID %s already exists.", vc.Type, vc.ConnectorID)}
		}
		return nil, err
	}
	return vc, nil
}

func (f *fakeConductor) DestroyVolumeConnector(ctx context.Context, n *objects.Node, vc *objects.VolumeConnector) error {
	f.record("destroy_volume_connector")
	if err := f.volumeState("volume connector deletion", n, true); err != nil {
		return err
	}
	return f.store.Delete(ctx, vc)
}

func (f *fakeConductor) UpdateVolumeTarget(ctx context.Context, n *objects.Node, vt *objects.VolumeTarget) (*objects.VolumeTarget, error) {
	f.record("update_volume_target")
	if err := f.locked(n); err != nil {
		return nil, err
	}
	if err := f.volumeState("volume target update", n, false); err != nil {
		return nil, err
	}
	if err := f.store.Save(ctx, vt); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, &rpc.RemoteError{Class: "VolumeTargetBootIndexAlreadyExists", Code: http.StatusConflict,
				Message: fmt.Sprintf("A volume target with boot index '%d' for the same node already exists.", vt.BootIndex)}
		}
		return nil, err
	}
	return vt, nil
}

func (f *fakeConductor) DestroyVolumeTarget(ctx context.Context, n *objects.Node, vt *objects.VolumeTarget) error {
	f.record("destroy_volume_target")
	if err := f.volumeState("volume target deletion", n, true); err != nil {
		return err
	}
	return f.store.Delete(ctx, vt)
}
