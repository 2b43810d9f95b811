package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

var _ plugins.SensorReader = (*Driver)(nil)

// GetSensorData implements plugins.SensorReader: the Thermal (temperatures,
// fans) and Power (power consumed, supplies, voltages) resources of every
// chassis linked from the node's system, or, for a chassis that links
// neither (the newer ThermalSubsystem/PowerSubsystem schema), its Sensors
// collection. A chassis without them, or one that answers 404 for them,
// contributes nothing; a reading the BMC leaves
// out is left out. Sensor names that repeat across chassis get the
// chassis's id appended.
func (d *Driver) GetSensorData(ctx context.Context, node plugins.Node) ([]plugins.Sensor, error) {
	var out []plugins.Sensor
	err := d.call(ctx, node, "get sensor data", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		chassis, err := sys.Chassis()
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		add := func(ch *schemas.Chassis, s plugins.Sensor) {
			if key := string(s.Type) + "\x00" + s.Name; seen[key] {
				s.Name = fmt.Sprintf("%s (%s)", s.Name, ch.ID)
			} else {
				seen[key] = true
			}
			out = append(out, s)
		}
		for _, ch := range chassis {
			if !hasLink(ch.RawData, "Thermal") && !hasLink(ch.RawData, "Power") {
				// A BMC of the newer schema: the chassis's Sensors
				// collection carries every reading.
				sensors, err := ch.Sensors()
				if err != nil {
					if fatal := sensorSkip(ctx, t, ch, "Sensors", err); fatal != nil {
						return fatal
					}
				}
				for _, s := range sensorCollection(sensors) {
					add(ch, s)
				}
				continue
			}
			if th, err := ch.Thermal(); err != nil {
				if fatal := sensorSkip(ctx, t, ch, "Thermal", err); fatal != nil {
					return fatal
				}
			} else if th != nil {
				for _, s := range thermalSensors(th) {
					add(ch, s)
				}
			}
			if pw, err := ch.Power(); err != nil {
				if fatal := sensorSkip(ctx, t, ch, "Power", err); fatal != nil {
					return fatal
				}
			} else if pw != nil {
				for _, s := range powerSensors(pw) {
					add(ch, s)
				}
			}
		}
		return nil
	})
	return out, err
}

// sensorSkip returns err when the BMC stopped answering or the caller gave
// up; any other failure (a 404, a resource it cannot render) only loses
// that resource's readings, logged at debug level.
func sensorSkip(ctx context.Context, t target, ch *schemas.Chassis, what string, err error) error {
	switch classify(ctx, err) {
	case failNone:
		return nil
	case failNoAnswer, failCaller, failQueue, failAuth:
		return err
	}
	t.logger.Debug("sensor data: resource unreadable; skipped", "chassis", ch.ID, "resource", what,
		"error", scrub(err.Error(), t.ni.secrets))
	return nil
}

func sensorName(name, memberID, fallback string) string {
	switch {
	case name != "":
		return name
	case memberID != "":
		return fallback + " " + memberID
	}
	return fallback
}

func thermalSensors(th *schemas.Thermal) []plugins.Sensor {
	var out []plugins.Sensor
	for _, tp := range th.Temperatures {
		if tp.ReadingCelsius == nil {
			continue
		}
		out = append(out, plugins.Sensor{Type: plugins.SensorTemperature, Name: sensorName(tp.Name, tp.MemberID, "Temperature"),
			Value: *tp.ReadingCelsius, Unit: "Cel", Health: string(tp.Status.Health)})
	}
	for _, f := range th.Fans {
		if f.Reading == nil {
			continue
		}
		name := sensorName(f.Name, f.MemberID, "Fan")
		if f.Name == "" && f.FanName != "" {
			name = f.FanName
		}
		unit := string(f.ReadingUnits)
		if unit == "" {
			unit = "RPM"
		}
		out = append(out, plugins.Sensor{Type: plugins.SensorFan, Name: name, Value: float64(*f.Reading), Unit: unit,
			Health: string(f.Status.Health)})
	}
	return out
}

func powerSensors(pw *schemas.Power) []plugins.Sensor {
	var out []plugins.Sensor
	for _, pc := range pw.PowerControl {
		if pc.PowerConsumedWatts == nil {
			continue
		}
		out = append(out, plugins.Sensor{Type: plugins.SensorPower, Name: sensorName(pc.Name, pc.MemberID, "Power Control"),
			Value: f32(gofish.Deref(pc.PowerConsumedWatts)), Unit: "W", Health: string(pc.Status.Health)})
	}
	for _, ps := range pw.PowerSupplies {
		if ps.LastPowerOutputWatts == nil {
			continue
		}
		out = append(out, plugins.Sensor{Type: plugins.SensorPower, Name: sensorName(ps.Name, ps.MemberID, "Power Supply") + " Output",
			Value: f32(*ps.LastPowerOutputWatts), Unit: "W", Health: string(ps.Status.Health)})
	}
	for _, v := range pw.Voltages {
		if v.ReadingVolts == nil {
			continue
		}
		out = append(out, plugins.Sensor{Type: plugins.SensorVoltage, Name: sensorName(v.Name, v.MemberID, "Voltage"),
			Value: f32(*v.ReadingVolts), Unit: "V", Health: string(v.Status.Health)})
	}
	return out
}

// f32 widens a float32 reading as written (12.04, not 12.039999961853027).
func f32(v float32) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	return f
}

// hasLink reports whether a resource's JSON links key ({"@odata.id": …}).
func hasLink(raw []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	var l struct {
		ID string `json:"@odata.id"`
	}
	return json.Unmarshal(m[key], &l) == nil && l.ID != ""
}

// readingTypes maps the Sensor resource's ReadingType to a sensor type and
// the unit its value is in.
var readingTypes = map[schemas.ReadingType]struct {
	typ  plugins.SensorType
	unit string
}{
	schemas.TemperatureReadingType: {plugins.SensorTemperature, "Cel"},
	schemas.RotationalReadingType:  {plugins.SensorFan, "RPM"},
	schemas.PowerReadingType:       {plugins.SensorPower, "W"},
	schemas.VoltageReadingType:     {plugins.SensorVoltage, "V"},
}

// sensorCollection keeps the temperature, fan, power and voltage readings
// of a Sensors collection.
func sensorCollection(sensors []*schemas.Sensor) []plugins.Sensor {
	var out []plugins.Sensor
	for _, s := range sensors {
		rt, ok := readingTypes[s.ReadingType]
		if s == nil || !ok || s.Reading == nil {
			continue
		}
		unit := rt.unit
		if s.ReadingUnits != "" {
			unit = s.ReadingUnits
		}
		out = append(out, plugins.Sensor{Type: rt.typ, Name: sensorName(s.Name, s.ID, string(s.ReadingType)),
			Value: *s.Reading, Unit: unit, Health: string(s.Status.Health)})
	}
	return out
}
