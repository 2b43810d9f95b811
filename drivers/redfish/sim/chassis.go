package sim

import (
	"fmt"
	"net/http"
	"strconv"
)

func (s *Simulator) listChassis(w http.ResponseWriter, r *http.Request) {
	members := make([]string, len(s.systems))
	for i := range members {
		members[i] = chassisOf(i)
	}
	writeJSON(w, http.StatusOK, collection(chassisPath, "#ChassisCollection.ChassisCollection", "Chassis Collection", members))
}

// getChassis renders the enclosure of one system; its PowerState follows
// the system's.
func (s *Simulator) getChassis(w http.ResponseWriter, r *http.Request) {
	s.getSystemResource(w, r, func(i int, sys *system) (obj, string) {
		return s.chassisBody(i, sys), sys.chassisETag()
	})
}

// chassisBody renders the chassis of system i; the caller holds sys.mu.
func (s *Simulator) chassisBody(i int, sys *system) obj {
	power := sys.powerState(s.now())
	body := obj{
		"@odata.id":    chassisOf(i),
		"@odata.type":  "#Chassis.v1_22_0.Chassis",
		"Id":           SystemID(i),
		"Name":         "Chassis of node " + strconv.Itoa(i),
		"ChassisType":  "RackMount",
		"Manufacturer": "Rivet",
		"Model":        "rivet-sim",
		"SerialNumber": fmt.Sprintf("RSIM%08d", i),
		"PowerState":   power,
		"Status":       statusOK(),
		"Thermal":      link(thermalOf(i)),
		"Power":        link(powerOf(i)),
		"Links": obj{
			"ComputerSystems": links(systemPath(i)),
			"ManagedBy":       links(managerPath(i)),
		},
	}
	indicatorProps(body, sys.chassisLED)
	return body
}
