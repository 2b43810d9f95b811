package redfish

import (
	"fmt"
	"slices"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// media is the virtual media of one system as its profile finds it.
type media struct {
	prof  profile
	where string                  // MediaSystem or MediaManager
	slots []*schemas.VirtualMedia // every slot at that location
}

// findMedia looks for the system's virtual media where its profile says,
// in order, and returns the first location that has any.
func findMedia(t target, sys *schemas.ComputerSystem) (media, error) {
	prof := profileFor(t.c.Service.Vendor).withLocation(t.ni.mediaLocation)
	for _, loc := range prof.locations {
		var slots []*schemas.VirtualMedia
		switch loc {
		case MediaSystem:
			vms, err := sys.VirtualMedia()
			if err != nil {
				return media{}, err
			}
			slots = vms
		case MediaManager:
			mgrs, err := sys.ManagedBy()
			if err != nil {
				return media{}, err
			}
			for _, m := range mgrs {
				vms, err := m.VirtualMedia()
				if err != nil {
					return media{}, err
				}
				slots = append(slots, vms...)
			}
		}
		if len(slots) > 0 {
			if prof.method == methodPatch {
				for _, s := range slots {
					s.SupportsMediaInsert, s.SupportsMediaEject = false, false
				}
			}
			return media{prof: prof, where: loc, slots: slots}, nil
		}
	}
	return media{}, fmt.Errorf("no virtual media under the system's %v (profile %s): %w",
		prof.locations, prof.name, plugins.ErrNotSupported)
}

// bootable reports whether a slot can take a boot ISO under m's profile.
func (m media) bootable(s *schemas.VirtualMedia) bool {
	return slices.ContainsFunc(s.MediaTypes, func(t schemas.VirtualMediaType) bool {
		return slices.Contains(m.prof.mediaTypes, t)
	})
}

// cdSlot picks the slot for a boot ISO: by the profile's media types in
// order of preference, never by id or position.
func (m media) cdSlot() (*schemas.VirtualMedia, error) {
	for _, want := range m.prof.mediaTypes {
		for _, s := range m.slots {
			if slices.Contains(s.MediaTypes, want) {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("no CD or DVD virtual media slot under the %s: %w", m.where, plugins.ErrNotSupported)
}

// ejectAll ejects every bootable slot that holds media. A slot is read
// again after each change, so its ETag is current.
func (m media) ejectAll() error {
	for _, s := range m.slots {
		if !m.bootable(s) || (!gofish.Deref(s.Inserted) && s.Image == "") {
			continue
		}
		if _, err := s.EjectMedia(); err != nil {
			return fmt.Errorf("eject %s: %w", s.ODataID, err)
		}
	}
	return nil
}

// insert puts image into slot s, read afresh so that its ETag matches.
func (m media) insert(c *gofish.APIClient, s *schemas.VirtualMedia, image string) error {
	fresh, err := schemas.GetVirtualMedia(c, s.ODataID)
	if err != nil {
		return err
	}
	fresh.SupportsMediaInsert = fresh.SupportsMediaInsert && m.prof.method != methodPatch
	_, err = fresh.InsertMedia(&schemas.VirtualMediaInsertMediaParameters{
		Image:          image,
		Inserted:       gofish.ToRef(true),
		WriteProtected: gofish.ToRef(true),
	})
	if err != nil {
		return fmt.Errorf("insert media into %s: %w", s.ODataID, err)
	}
	return nil
}
