package plugins

import (
	"context"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// sensorsServer serves protocol 2's Sensors service over a SensorReader.
// Every error leaves through toStatus.
type sensorsServer struct {
	driverv2.UnimplementedSensorsServer
	driver Driver
	info   Info
}

func (s *sensorsServer) GetSensorData(ctx context.Context, req *driverv1.NodeRequest) (*driverv2.SensorData, error) {
	d, err := capability[SensorReader](&server{driver: s.driver, info: s.info}, "get sensor data")
	if err != nil {
		return nil, toStatus(err)
	}
	sensors, err := d.GetSensorData(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	return sensorsToProto(sensors), nil
}

// sensorsToProto is the wire form of sensors.
func sensorsToProto(sensors []Sensor) *driverv2.SensorData {
	out := &driverv2.SensorData{Sensors: make([]*driverv2.Sensor, len(sensors))}
	for i, s := range sensors {
		out.Sensors[i] = &driverv2.Sensor{Type: string(s.Type), Name: s.Name, Value: s.Value, Unit: s.Unit, Health: s.Health}
	}
	return out
}
