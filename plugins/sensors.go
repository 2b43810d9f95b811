package plugins

import "context"

// CapabilitySensors is advertised by a plugin whose driver implements
// SensorReader and that serves protocol 2 (the rivet.driver.v2.Sensors
// service); the host reads sensors only from such plugins.
const CapabilitySensors Capability = "sensors"

// SensorType is the kind of a sensor reading.
type SensorType string

// Sensor types, and the unit of their Value.
const (
	// SensorTemperature readings are in degrees Celsius.
	SensorTemperature SensorType = "temperature"
	// SensorFan readings are in RPM, or in percent when Unit is "Percent".
	SensorFan SensorType = "fan"
	// SensorPower readings are in watts.
	SensorPower SensorType = "power"
	// SensorVoltage readings are in volts.
	SensorVoltage SensorType = "voltage"
)

// Sensor is one reading of a node's BMC.
type Sensor struct {
	Type SensorType
	// Name is the BMC's name of the sensor ("CPU1 Temp", "PSU1 Input"),
	// unique per Type on one node.
	Name string
	// Value is the reading, in the unit Type implies (see Unit for fans).
	Value float64
	// Unit is the unit as the BMC names it ("Cel", "RPM", "Percent", "W",
	// "V"), for display.
	Unit string
	// Health is the BMC's health of the sensor ("OK", "Warning",
	// "Critical"), "" when it reports none.
	Health string
}

// SensorReader reads a node's sensors (temperatures, fans, power supplies,
// voltages) from its BMC now. A sensor without a reading is left out, not
// reported as zero. Ironic's management interface get_sensors_data.
type SensorReader interface {
	GetSensorData(ctx context.Context, n Node) ([]Sensor, error)
}
