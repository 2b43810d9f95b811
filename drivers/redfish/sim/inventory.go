package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// inventoryRoutes registers the read-only hardware resources under a system:
// what inspection reads (CPUs, DIMMs, NICs with MACs, disks).
func (s *Simulator) inventoryRoutes(get func(string, http.HandlerFunc)) {
	base := systemsPath + "/{id}"
	get(base+"/Processors", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		return collection(p, "#ProcessorCollection.ProcessorCollection", "Processors Collection",
			numbered(p+"/CPU", 1, hw.sockets)), true
	}))
	get(base+"/Processors/{item}", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		n, ok := itemNumber(p, "CPU", 1, hw.sockets)
		return obj{
			"@odata.id": p, "@odata.type": "#Processor.v1_17_0.Processor",
			"Id": "CPU" + strconv.Itoa(n), "Name": "Processor", "Socket": "CPU " + strconv.Itoa(n),
			"ProcessorType": "CPU", "ProcessorArchitecture": "x86", "InstructionSet": "x86-64",
			"Model": hw.cpuModel, "TotalCores": hw.coresPerSocket, "TotalThreads": 2 * hw.coresPerSocket,
			"MaxSpeedMHz": 3500, "Status": statusOK(),
		}, ok
	}))
	get(base+"/Memory", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		return collection(p, "#MemoryCollection.MemoryCollection", "Memory Module Collection",
			numbered(p+"/DIMM", 1, hw.dimms)), true
	}))
	get(base+"/Memory/{item}", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		n, ok := itemNumber(p, "DIMM", 1, hw.dimms)
		return obj{
			"@odata.id": p, "@odata.type": "#Memory.v1_17_0.Memory",
			"Id": "DIMM" + strconv.Itoa(n), "Name": "DIMM Slot " + strconv.Itoa(n),
			"CapacityMiB": hw.dimmGiB * 1024, "MemoryType": "DRAM", "MemoryDeviceType": "DDR4",
			"OperatingSpeedMhz": 3200, "Status": statusOK(),
		}, ok
	}))
	get(base+"/EthernetInterfaces", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		return collection(p, "#EthernetInterfaceCollection.EthernetInterfaceCollection", "Ethernet Interface Collection",
			numbered(p+"/NIC", 1, nicsPerSystem)), true
	}))
	get(base+"/EthernetInterfaces/{item}", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		n, ok := itemNumber(p, "NIC", 1, nicsPerSystem)
		mac := macAddress(s.opts.Seed, i, n-1)
		link := "LinkUp"
		if n > 1 {
			link = "LinkDown"
		}
		return obj{
			"@odata.id": p, "@odata.type": "#EthernetInterface.v1_9_0.EthernetInterface",
			"Id": "NIC" + strconv.Itoa(n), "Name": "Ethernet Interface", "Description": "System NIC " + strconv.Itoa(n),
			"MACAddress": mac, "PermanentMACAddress": mac, "SpeedMbps": 25000, "FullDuplex": true,
			"LinkStatus": link, "InterfaceEnabled": true, "Status": statusOK(),
		}, ok
	}))
	get(base+"/SimpleStorage", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		return collection(p, "#SimpleStorageCollection.SimpleStorageCollection", "Simple Storage Collection",
			[]string{p + "/1"}), true
	}))
	get(base+"/SimpleStorage/{item}", s.inventory(func(i int, hw hardware, p string) (obj, bool) {
		devices := make([]obj, len(hw.disks))
		for j, d := range hw.disks {
			devices[j] = obj{"Name": fmt.Sprintf("Bay %d", j), "Model": d.model(),
				"CapacityBytes": d.capacityBytes, "Status": statusOK()}
		}
		return obj{
			"@odata.id": p, "@odata.type": "#SimpleStorage.v1_3_1.SimpleStorage",
			"Id": "1", "Name": "Simple Storage Controller", "Devices": devices, "Status": statusOK(),
		}, strings.HasSuffix(p, "/SimpleStorage/1")
	}))
}

// inventory adapts a renderer to a handler: it resolves the system, derives
// its hardware and answers 404 when the renderer does not know the item.
func (s *Simulator) inventory(render func(i int, hw hardware, path string) (obj, bool)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i, ok := s.systemFor(w, r)
		if !ok {
			return
		}
		body, ok := render(i, s.hardware(i), r.URL.Path)
		if !ok {
			writeError(w, errNotFound(r.URL.Path))
			return
		}
		writeJSON(w, http.StatusOK, body)
	}
}

// numbered lists prefix+first … prefix+(first+n-1).
func numbered(prefix string, first, n int) []string {
	out := make([]string, n)
	for j := range out {
		out[j] = prefix + strconv.Itoa(first+j)
	}
	return out
}

// itemNumber parses the last path segment "<kind><n>" with first <= n < first+count.
func itemNumber(path, kind string, first, count int) (int, bool) {
	last := path[strings.LastIndexByte(path, '/')+1:]
	rest, ok := strings.CutPrefix(last, kind)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || strconv.Itoa(n) != rest || n < first || n >= first+count {
		return 0, false
	}
	return n, true
}

func (d disk) model() string {
	if d.ssd {
		return fmt.Sprintf("SIM-NVME-%dG", d.capacityBytes/1e9)
	}
	return fmt.Sprintf("SIM-HDD-%dT", d.capacityBytes/1e12)
}
