package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Storage: one controller (Storage/1) per system, with the system's drives
// and the volumes built from them. Volumes are created by POST to the
// Volumes collection and deleted by DELETE, as DMTF's Storage model and
// Ironic's redfish RAID do. A change applies IMMEDIATELY: the volume exists
// (or is gone) when the answer is sent, and the collection advertises
// OperationApplyTimeSupport "Immediate" only. (Real BMCs vary: some apply
// at the next reset and answer with a task; the simulator picks the
// simpler behaviour.) Volumes live in the system's state: the drives of a
// volume are in use, a volume needs its RAID type's minimum of drives, and
// its capacity may not exceed what the drives give at that RAID level.

// raidTypes are the RAID types the controller supports, with the minimum
// number of drives and the drives' worth of capacity parity or mirroring
// takes (for RAID1 and RAID10, half of them).
var raidTypes = []struct {
	name     string
	min      int
	overhead func(n int) int
}{
	{"RAID0", 1, func(int) int { return 0 }},
	{"RAID1", 2, func(n int) int { return n / 2 }},
	{"RAID5", 3, func(int) int { return 1 }},
	{"RAID6", 4, func(int) int { return 2 }},
	{"RAID10", 4, func(n int) int { return n / 2 }},
}

// volume is one logical disk of a system.
type volume struct {
	id            int
	name          string
	raidType      string
	capacityBytes int64
	drives        []int // drive numbers
}

// storageState is a system's volumes; guarded by the system's mu.
type storageState struct {
	volumes []volume
	nextID  int
}

func storagePath(i int) string { return systemPath(i) + "/Storage/1" }

func drivePath(i, n int) string { return storagePath(i) + "/Drives/Disk" + strconv.Itoa(n) }

func volumePath(i, id int) string { return storagePath(i) + "/Volumes/" + strconv.Itoa(id) }

// storageRoutes registers Storage, its drives and its volumes.
func (s *Simulator) storageRoutes(mux *http.ServeMux) {
	base := systemsPath + "/{id}/Storage"
	mux.Handle(base, methods{http.MethodGet: s.listStorage})
	mux.Handle(base+"/{sid}", methods{http.MethodGet: s.getStorage})
	mux.Handle(base+"/{sid}/Drives/{drive}", methods{http.MethodGet: s.getDrive})
	mux.Handle(base+"/{sid}/Volumes", methods{http.MethodGet: s.listVolumes, http.MethodPost: s.createVolume})
	mux.Handle(base+"/{sid}/Volumes/{vid}", methods{http.MethodGet: s.getVolume, http.MethodDelete: s.deleteVolume})
}

// storageFor resolves {id} and {sid} (only "1" exists) or answers 404.
func (s *Simulator) storageFor(w http.ResponseWriter, r *http.Request) (int, bool) {
	i, ok := s.systemFor(w, r)
	if ok && r.PathValue("sid") != "1" {
		writeError(w, errNotFound(r.URL.Path))
		return 0, false
	}
	return i, ok
}

func (s *Simulator) listStorage(w http.ResponseWriter, r *http.Request) {
	i, ok := s.systemFor(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, collection(systemPath(i)+"/Storage", "#StorageCollection.StorageCollection", "Storage Collection",
		[]string{storagePath(i)}))
}

func (s *Simulator) getStorage(w http.ResponseWriter, r *http.Request) {
	i, ok := s.storageFor(w, r)
	if !ok {
		return
	}
	hw := s.hardware(i)
	p := storagePath(i)
	types := make([]string, len(raidTypes))
	for j, t := range raidTypes {
		types[j] = t.name
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": p, "@odata.type": "#Storage.v1_15_0.Storage",
		"Id": "1", "Name": "Storage Controller", "Status": statusOK(),
		"Drives@odata.count": len(hw.disks), "Drives": links(numbered(p+"/Drives/Disk", 0, len(hw.disks))...),
		"Volumes": link(p + "/Volumes"),
		"StorageControllers": []obj{{
			"MemberId": "0", "Name": "Simulated RAID controller",
			"Status": statusOK(), "SupportedRAIDTypes": types,
			"SupportedDeviceProtocols": []string{"SAS", "NVMe"},
		}},
	})
}

func (s *Simulator) getDrive(w http.ResponseWriter, r *http.Request) {
	i, ok := s.storageFor(w, r)
	if !ok {
		return
	}
	hw := s.hardware(i)
	n, ok := itemNumber(r.URL.Path, "Disk", 0, len(hw.disks))
	if !ok {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	var vols []string
	for _, v := range sys.storage.volumes {
		if slices.Contains(v.drives, n) {
			vols = append(vols, volumePath(i, v.id))
		}
	}
	sys.mu.Unlock()
	d := hw.disks[n]
	media, proto := "HDD", "SAS"
	if d.ssd {
		media, proto = "SSD", "NVMe"
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": r.URL.Path, "@odata.type": "#Drive.v1_17_0.Drive",
		"Id": "Disk" + strconv.Itoa(n), "Name": fmt.Sprintf("Drive %d", n), "Model": d.model(),
		"CapacityBytes": d.capacityBytes, "MediaType": media, "Protocol": proto, "Status": statusOK(),
		"Links": obj{"Volumes": links(vols...)},
	})
}

func (s *Simulator) listVolumes(w http.ResponseWriter, r *http.Request) {
	i, ok := s.storageFor(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	members := make([]string, len(sys.storage.volumes))
	for j, v := range sys.storage.volumes {
		members[j] = volumePath(i, v.id)
	}
	sys.mu.Unlock()
	body := collection(storagePath(i)+"/Volumes", "#VolumeCollection.VolumeCollection", "Volume Collection", members)
	body["@Redfish.OperationApplyTimeSupport"] = obj{
		"@odata.type": "#Settings.v1_3_5.OperationApplyTimeSupport", "SupportedValues": []string{"Immediate"}}
	writeJSON(w, http.StatusOK, body)
}

// volumeBody renders v of system i.
func volumeBody(i int, v volume) obj {
	drives := make([]string, len(v.drives))
	for j, n := range v.drives {
		drives[j] = drivePath(i, n)
	}
	return obj{
		"@odata.id": volumePath(i, v.id), "@odata.type": "#Volume.v1_9_0.Volume",
		"Id": strconv.Itoa(v.id), "Name": v.name, "RAIDType": v.raidType, "CapacityBytes": v.capacityBytes,
		"Encrypted": false, "Status": statusOK(), "Links": obj{"Drives": links(drives...)},
	}
}

// volumeFor resolves {vid} among the system's volumes; the caller holds
// sys.mu.
func volumeFor(sys *system, vid string) (int, bool) {
	id, err := strconv.Atoi(vid)
	if err != nil || strconv.Itoa(id) != vid {
		return -1, false
	}
	j := slices.IndexFunc(sys.storage.volumes, func(v volume) bool { return v.id == id })
	return j, j >= 0
}

func (s *Simulator) getVolume(w http.ResponseWriter, r *http.Request) {
	i, ok := s.storageFor(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	j, found := volumeFor(sys, r.PathValue("vid"))
	var body obj
	if found {
		body = volumeBody(i, sys.storage.volumes[j])
	}
	sys.mu.Unlock()
	if !found {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Simulator) deleteVolume(w http.ResponseWriter, r *http.Request) {
	i, ok := s.storageFor(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	j, found := volumeFor(sys, r.PathValue("vid"))
	if found {
		sys.storage.volumes = slices.Delete(sys.storage.volumes, j, j+1)
		sys.gen++
	}
	sys.mu.Unlock()
	if !found {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// createVolume takes {"RAIDType", "CapacityBytes" (optional: all the
// drives give), "Name" (optional), "Links": {"Drives": [{"@odata.id"}]}}
// and answers 201 with the volume and its Location.
func (s *Simulator) createVolume(w http.ResponseWriter, r *http.Request) {
	i, ok := s.storageFor(w, r)
	if !ok {
		return
	}
	body, aerr := readObject(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	var req struct {
		Name          string
		RAIDType      string
		CapacityBytes *int64
		Links         struct {
			Drives []struct {
				ID string `json:"@odata.id"`
			}
		}
	}
	for _, k := range sortedKeys(body) {
		if !slices.Contains([]string{"Name", "RAIDType", "CapacityBytes", "Links", "@Redfish.OperationApplyTime"}, k) {
			writeError(w, errPropertyUnknown(k))
			return
		}
	}
	raw, _ := json.Marshal(body)
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, errMalformed(err.Error()))
		return
	}
	if at, ok := body["@Redfish.OperationApplyTime"]; ok && strings.Trim(string(at), `"`) != "Immediate" {
		writeError(w, errValueNotInList(string(at), "@Redfish.OperationApplyTime"))
		return
	}
	t := slices.IndexFunc(raidTypes, func(t struct {
		name     string
		min      int
		overhead func(n int) int
	}) bool {
		return t.name == req.RAIDType
	})
	if req.RAIDType == "" {
		writeError(w, newError(http.StatusBadRequest, "PropertyMissing",
			"The property RAIDType is a required property and must be included in the request.", "RAIDType"))
		return
	}
	if t < 0 {
		writeError(w, errValueNotInList(req.RAIDType, "RAIDType"))
		return
	}
	hw := s.hardware(i)
	var drives []int
	for _, d := range req.Links.Drives {
		n, ok := itemNumber(d.ID, "Disk", 0, len(hw.disks))
		if !ok || !strings.HasPrefix(d.ID, storagePath(i)+"/Drives/") || slices.Contains(drives, n) {
			writeError(w, newError(http.StatusBadRequest, "PropertyValueIncorrect",
				fmt.Sprintf("The value %s for the property Links/Drives is not a drive of this controller, or is named twice.", d.ID), d.ID, "Links/Drives"))
			return
		}
		drives = append(drives, n)
	}
	rt := raidTypes[t]
	if len(drives) < rt.min || (rt.name == "RAID1" && len(drives) != 2) || (rt.name == "RAID10" && len(drives)%2 != 0) {
		writeError(w, newError(http.StatusBadRequest, "PropertyValueIncorrect",
			fmt.Sprintf("%s needs at least %d drives (RAID1 exactly 2, RAID10 an even number); %d given.", rt.name, rt.min, len(drives)),
			strconv.Itoa(len(drives)), "Links/Drives"))
		return
	}
	smallest := hw.disks[drives[0]].capacityBytes
	for _, n := range drives {
		smallest = min(smallest, hw.disks[n].capacityBytes)
	}
	usable := smallest * int64(len(drives)-rt.overhead(len(drives)))
	size := usable
	if req.CapacityBytes != nil {
		size = *req.CapacityBytes
	}
	if size <= 0 || size > usable {
		writeError(w, newError(http.StatusBadRequest, "PropertyValueIncorrect",
			fmt.Sprintf("CapacityBytes %d is out of range: %s over these drives gives at most %d bytes.", size, rt.name, usable),
			strconv.FormatInt(size, 10), "CapacityBytes"))
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	for _, v := range sys.storage.volumes {
		for _, n := range drives {
			if slices.Contains(v.drives, n) {
				sys.mu.Unlock()
				writeError(w, newError(http.StatusConflict, "ResourceInUse",
					fmt.Sprintf("The drive %s is in use by volume %d.", drivePath(i, n), v.id), drivePath(i, n)))
				return
			}
		}
	}
	sys.storage.nextID++
	v := volume{id: sys.storage.nextID, name: req.Name, raidType: rt.name, capacityBytes: size, drives: drives}
	if v.name == "" {
		v.name = "Volume " + strconv.Itoa(v.id)
	}
	sys.storage.volumes = append(sys.storage.volumes, v)
	sys.gen++
	out := volumeBody(i, v)
	sys.mu.Unlock()
	w.Header().Set("Location", volumePath(i, v.id))
	writeJSON(w, http.StatusCreated, out)
}

func errValueNotInList(value, property string) *apiError {
	return newError(http.StatusBadRequest, "PropertyValueNotInList",
		fmt.Sprintf("The value %s for the property %s is not in the list of acceptable values.", value, property), value, property)
}
