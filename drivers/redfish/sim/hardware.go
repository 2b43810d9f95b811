package sim

import "fmt"

// hardware is what a system is made of. It is derived from (seed, index) on
// every request rather than stored, which is what keeps 10,000 systems cheap.
type hardware struct {
	sockets        int
	coresPerSocket int
	cpuModel       string
	dimms          int
	dimmGiB        int
	disks          []disk
}

type disk struct {
	capacityBytes int64
	ssd           bool
}

// nicsPerSystem is how many EthernetInterfaces each system has.
const nicsPerSystem = 2

var (
	cpuModels = []string{
		"Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
		"AMD EPYC 7443 24-Core Processor",
		"Intel(R) Xeon(R) Silver 4314 CPU @ 2.40GHz",
	}
	coreCounts     = []int{8, 16, 24, 32}
	dimmsPerSocket = []int{2, 4, 8}
	dimmSizesGiB   = []int{16, 32, 64}
	diskSizes      = []int64{480e9, 960e9, 1920e9, 3840e9, 8e12}
)

// mix is splitmix64 over (seed, index, salt): cheap, stateless, well spread.
func mix(seed uint64, i int, salt uint64) uint64 {
	z := seed + uint64(int64(i))*0x9e3779b97f4a7c15 + salt*0xbf58476d1ce4e5b9
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *Simulator) hardware(i int) hardware {
	seed := s.opts.Seed
	h := mix(seed, i, 1)
	hw := hardware{
		sockets:        1 + int(h&1),
		coresPerSocket: coreCounts[(h>>1)%uint64(len(coreCounts))],
		cpuModel:       cpuModels[(h>>4)%uint64(len(cpuModels))],
		dimmGiB:        dimmSizesGiB[(h>>8)%uint64(len(dimmSizesGiB))],
	}
	hw.dimms = hw.sockets * dimmsPerSocket[(h>>12)%uint64(len(dimmsPerSocket))]
	n := 1 + int((h>>16)%3)
	for j := range n {
		c := diskSizes[mix(seed, i, 10+uint64(j))%uint64(len(diskSizes))]
		hw.disks = append(hw.disks, disk{capacityBytes: c, ssd: c < 4e12})
	}
	return hw
}

func (hw hardware) memoryGiB() int { return hw.dimms * hw.dimmGiB }

// macAddress is unique per (index, nic) for up to MaxSystems systems: a
// locally administered prefix, one seed byte, then the index and NIC number.
func macAddress(seed uint64, i, nic int) string {
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", byte(mix(seed, 0, 2)), byte(i>>16), byte(i>>8), byte(i), byte(nic))
}

// UUID kinds: each resource kind gets its own UUID space.
const (
	uuidSystem uint64 = iota
	uuidManager
	uuidService
)

// uuidFrom derives a version-4-shaped UUID for the i-th resource of a kind.
func uuidFrom(seed uint64, i int, kind uint64) string {
	a, b := mix(seed, i, 100+2*kind), mix(seed, i, 101+2*kind)
	a = a&^(0xf<<12) | 0x4<<12 // version 4
	b = b&^(0x3<<62) | 0x2<<62 // RFC 4122 variant
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}
