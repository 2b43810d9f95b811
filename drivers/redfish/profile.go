package redfish

import (
	"strings"

	"github.com/stmcginnis/gofish/schemas"
)

// insertMethod is how virtual media is inserted and ejected.
type insertMethod int

const (
	// methodAuto uses the InsertMedia/EjectMedia actions a slot
	// advertises and PATCHes the slot when it advertises none (gofish).
	methodAuto insertMethod = iota
	// methodPatch always PATCHes the slot, for BMCs whose actions are
	// missing or broken.
	methodPatch
)

// profile is what differs between BMC families for virtual-media boot,
// expressed as data so that a quirk is a table row, not an if in the code
// path. A profile is chosen by the service root's Vendor; a node's
// redfish_virtual_media_location overrides its locations.
type profile struct {
	name string
	// vendors match the service root's Vendor, case-insensitively, as a
	// prefix; the generic profile has none and matches the rest.
	vendors []string
	// locations lists where to look for virtual media, in order: the
	// System (newer BMCs, Redfish 1.11+) or its Managers (older ones).
	locations []string
	// mediaTypes are the slot media types that can boot an ISO, best
	// first; the slot is chosen by them, never by its id or position.
	mediaTypes []schemas.VirtualMediaType
	// method is how media goes in and out.
	method insertMethod
	// plainImageURL: the BMC refuses image URLs holding '?' or '='.
	plainImageURL bool
}

// profiles are the known BMC families. Sources: Ironic's redfish driver
// notes and the complaints gathered in design/prior-art (items 34-36).
var profiles = []profile{
	// iLO keeps virtual media on the Manager; its CD is slot 2, which the
	// media types find.
	{name: "hpe", vendors: []string{"HPE", "Hewlett"}, locations: []string{MediaManager, MediaSystem},
		mediaTypes: cdTypes},
	// iDRAC 6+ serves it on the System, older firmware on the Manager.
	{name: "dell", vendors: []string{"Dell"}, locations: []string{MediaSystem, MediaManager},
		mediaTypes: cdTypes},
	// XCC has no InsertMedia/EjectMedia actions.
	{name: "lenovo", vendors: []string{"Lenovo"}, locations: []string{MediaManager, MediaSystem},
		mediaTypes: cdTypes, method: methodPatch},
	// X12 refuses query strings in image URLs (Swift temp-URLs fail).
	{name: "supermicro", vendors: []string{"Supermicro"}, locations: []string{MediaManager, MediaSystem},
		mediaTypes: cdTypes, plainImageURL: true},
	{name: "generic", locations: []string{MediaSystem, MediaManager}, mediaTypes: cdTypes},
}

var cdTypes = []schemas.VirtualMediaType{schemas.CDVirtualMediaType, schemas.DVDVirtualMediaType}

// profileFor picks the profile of a service root's Vendor.
func profileFor(vendor string) profile {
	v := strings.ToLower(strings.TrimSpace(vendor))
	for _, p := range profiles {
		for _, pv := range p.vendors {
			if strings.HasPrefix(v, strings.ToLower(pv)) {
				return p
			}
		}
	}
	return profiles[len(profiles)-1]
}

// withLocation narrows p to the location a node's driver_info names.
func (p profile) withLocation(loc string) profile {
	if loc != MediaAuto && loc != "" {
		p.locations = []string{loc}
	}
	return p
}
