package sim

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// The chassis of each system has Thermal and Power resources (Redfish's
// Chassis Thermal v1 and Power v1, which gofish and Ironic's sensor data
// read): two CPU temperatures and an inlet, three fans (one reported in
// percent), the power consumed, two supplies and two rails. Readings follow the system's power state and
// drift slowly with the simulator's clock (a period of a few minutes,
// phase-shifted per system), so a scraper sees plausible, changing values;
// they are deterministic for a given clock.

func thermalOf(i int) string { return chassisOf(i) + "/Thermal" }
func powerOf(i int) string   { return chassisOf(i) + "/Power" }

// wave is a slow oscillation in [-1, 1] of system i at now (ns), with
// period p.
func wave(now int64, i int, p time.Duration) float64 {
	return math.Sin(2*math.Pi*float64(now%int64(p))/float64(p) + float64(i))
}

// round keeps d decimals.
func round(v float64, d int) float64 {
	f := math.Pow(10, float64(d))
	return math.Round(v*f) / f
}

// readings are one system's sensor values at a moment.
type readings struct {
	cpu       [2]float64 // celsius
	inlet     float64    // celsius
	fans      [2]int     // RPM
	fanPct    int        // percent: a fan some BMCs report by duty cycle
	consumed  float64    // watts
	supplyOut [2]float64 // watts
	v12, v3   float64    // volts
}

// readingsOf computes system i's readings at now, on or off.
func readingsOf(i int, now int64, on bool) readings {
	w := wave(now, i, 5*time.Minute)
	w2 := wave(now, i+7, 3*time.Minute)
	r := readings{inlet: round(22+1.5*w2, 1), v12: round(12+0.04*w, 2), v3: round(3.3+0.02*w2, 2)}
	if on {
		r.cpu = [2]float64{round(52+8*w, 1), round(49+7*w2, 1)}
		r.fans = [2]int{int(6000 + 1200*w), int(5800 + 1100*w2)}
		r.fanPct = int(55 + 10*w)
		r.consumed = round(210+45*w, 1)
	} else {
		r.cpu = [2]float64{round(r.inlet+3, 1), round(r.inlet+2.5, 1)}
		r.fans = [2]int{1200, 1150}
		r.fanPct = 15
		r.consumed = round(9+0.5*w, 1)
	}
	r.supplyOut = [2]float64{round(r.consumed/2+1, 1), round(r.consumed/2-1, 1)}
	return r
}

func (s *Simulator) readingsFor(i int) readings {
	sys := &s.systems[i]
	now := s.now()
	sys.mu.Lock()
	on := sys.powerState(now) == PowerOn
	sys.mu.Unlock()
	return readingsOf(i, now, on)
}

func (s *Simulator) getThermal(w http.ResponseWriter, r *http.Request) {
	i, ok := s.systemFor(w, r)
	if !ok {
		return
	}
	rd := s.readingsFor(i)
	base := thermalOf(i)
	temp := func(n int, name string, v float64, ctx string, upper float64) obj {
		id := strconv.Itoa(n)
		return obj{"@odata.id": base + "#/Temperatures/" + id, "MemberId": id, "Name": name,
			"SensorNumber": n + 1, "ReadingCelsius": v, "PhysicalContext": ctx,
			"UpperThresholdNonCritical": upper - 10, "UpperThresholdCritical": upper, "Status": statusOK()}
	}
	fan := func(n int, name string, v int, unit string) obj {
		id := strconv.Itoa(n)
		low := 500
		if unit == "Percent" {
			low = 5
		}
		return obj{"@odata.id": base + "#/Fans/" + id, "MemberId": id, "Name": name,
			"Reading": v, "ReadingUnits": unit, "PhysicalContext": "SystemBoard",
			"LowerThresholdCritical": low, "Status": statusOK()}
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":   base,
		"@odata.type": "#Thermal.v1_7_0.Thermal",
		"Id":          "Thermal",
		"Name":        "Thermal",
		"Temperatures": []obj{
			temp(0, "CPU1 Temp", rd.cpu[0], "CPU", 95),
			temp(1, "CPU2 Temp", rd.cpu[1], "CPU", 95),
			temp(2, "Inlet Temp", rd.inlet, "Intake", 42),
		},
		"Fans":   []obj{fan(0, "Fan1", rd.fans[0], "RPM"), fan(1, "Fan2", rd.fans[1], "RPM"), fan(2, "Fan3", rd.fanPct, "Percent")},
		"Status": statusOK(),
	})
}

func (s *Simulator) getPower(w http.ResponseWriter, r *http.Request) {
	i, ok := s.systemFor(w, r)
	if !ok {
		return
	}
	rd := s.readingsFor(i)
	base := powerOf(i)
	supply := func(n int, out float64) obj {
		id := strconv.Itoa(n)
		return obj{"@odata.id": base + "#/PowerSupplies/" + id, "MemberId": id, "Name": "PSU" + strconv.Itoa(n+1),
			"PowerSupplyType": "AC", "PowerCapacityWatts": 800, "LastPowerOutputWatts": out,
			"PowerInputWatts": round(out*1.06, 1), "Status": statusOK()}
	}
	volt := func(n int, name string, v, nominal float64) obj {
		id := strconv.Itoa(n)
		return obj{"@odata.id": base + "#/Voltages/" + id, "MemberId": id, "Name": name, "ReadingVolts": v,
			"UpperThresholdCritical": round(nominal*1.1, 2), "LowerThresholdCritical": round(nominal*0.9, 2),
			"PhysicalContext": "SystemBoard", "Status": statusOK()}
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":   base,
		"@odata.type": "#Power.v1_7_1.Power",
		"Id":          "Power",
		"Name":        "Power",
		"PowerControl": []obj{{"@odata.id": base + "#/PowerControl/0", "MemberId": "0", "Name": "System Power Control",
			"PowerConsumedWatts": rd.consumed, "PowerCapacityWatts": 1600, "Status": statusOK()}},
		"PowerSupplies": []obj{supply(0, rd.supplyOut[0]), supply(1, rd.supplyOut[1])},
		"Voltages":      []obj{volt(0, "12V Rail", rd.v12, 12), volt(1, "3.3V Rail", rd.v3, 3.3)},
	})
}
