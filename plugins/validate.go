package plugins

import (
	"context"
	"errors"
	"strings"
)

// Capabilities of the Validation service (rivet.driver.v1.Validation),
// derived from the interfaces a driver implements. A plugin built with an
// SDK older than these advertises neither: the host then checks only the
// driver_info keys it knows itself and serves no properties for it.
const (
	// CapabilityValidate: the driver implements Validator.
	CapabilityValidate Capability = "validate"
	// CapabilityProperties: the driver implements PropertyDeclarer.
	CapabilityProperties Capability = "properties"
)

// Property is one driver_info key a driver takes, as
// GET /v1/drivers/{driver}/properties lists it.
type Property struct {
	// Name is the driver_info key ("acme_address").
	Name string
	// Required is true when the driver cannot work without the key.
	Required bool
	// Description says what the key holds, for an operator. The API
	// appends " Required." or " Optional." as Ironic's descriptions end.
	Description string
}

// PropertyDeclarer is optionally implemented by a Driver that declares the
// driver_info keys it takes. Properties must not do I/O.
type PropertyDeclarer interface {
	Properties() []Property
}

// Validator is optionally implemented by a Driver that checks a node before
// the conductor uses it (GET /v1/nodes/{node}/validate). Validate parses and
// type-checks every driver_info key (and, for InterfaceDeploy, the
// instance_info keys) the driver owns, and for InterfacePower and
// InterfaceManagement may reach the BMC with the node's credentials. The
// conductor bounds the call with a short deadline and caches the answer
// briefly per node and driver_info.
//
// Return nil when the node is usable through iface, and otherwise an error
// the conductor can classify:
//   - an *InvalidDriverInfoError (driver_info keys missing or invalid),
//   - an *InvalidInstanceInfoError (instance_info keys missing or invalid),
//   - ErrBMCUnreachable (the BMC did not answer),
//   - ErrCredentialsRefused (the BMC answered but refused the credentials),
//   - ErrWrongSystemID (the BMC has no such system, or needs one named),
//
// wrapped as you like. Any other error is reported as it reads. Never put a
// secret value in the error.
type Validator interface {
	Validate(ctx context.Context, node Node, iface Interface) error
}

var (
	// ErrCredentialsRefused: the BMC answered but refused the node's
	// credentials (HTTP 401, IPMI RAKP failure). Not retryable.
	ErrCredentialsRefused = errors.New("BMC refused the credentials")
	// ErrWrongSystemID: the BMC answered but has no system by the node's
	// system id, or manages several and the node names none.
	ErrWrongSystemID = errors.New("wrong system id")
)

// InvalidInstanceInfoError names the instance_info keys that are missing or
// invalid (an image reference that is not a URL, …), never their values.
type InvalidInstanceInfoError struct {
	Missing []string
	Invalid []string
	// Reason optionally says why, without values.
	Reason string
}

// Error names the keys, never their values.
func (e *InvalidInstanceInfoError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing "+strings.Join(e.Missing, ", "))
	}
	if len(e.Invalid) > 0 {
		parts = append(parts, "invalid "+strings.Join(e.Invalid, ", "))
	}
	msg := "invalid instance_info: " + strings.Join(parts, "; ")
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// ValidationProblem classifies why a node failed validation.
type ValidationProblem string

// Validation problems, as they travel between plugin and host.
const (
	ProblemNone                ValidationProblem = ""
	ProblemInvalidDriverInfo   ValidationProblem = "invalid_driver_info"
	ProblemInvalidInstanceInfo ValidationProblem = "invalid_instance_info"
	ProblemUnreachable         ValidationProblem = "unreachable"
	ProblemCredentialsRefused  ValidationProblem = "credentials_refused"
	ProblemWrongSystemID       ValidationProblem = "wrong_system_id"
	ProblemOther               ValidationProblem = "other"
)

// ClassifyValidation returns the problem err reports (ProblemNone for nil).
func ClassifyValidation(err error) ValidationProblem {
	var inst *InvalidInstanceInfoError
	var classified interface{ ValidationProblem() ValidationProblem }
	switch {
	case err == nil:
		return ProblemNone
	case errors.As(err, &classified): // from across the plugin boundary
		return classified.ValidationProblem()
	case errors.Is(err, ErrCredentialsRefused): // before driver_info: may wrap both
		return ProblemCredentialsRefused
	case errors.Is(err, ErrWrongSystemID):
		return ProblemWrongSystemID
	case errors.Is(err, ErrBMCUnreachable):
		return ProblemUnreachable
	case errors.Is(err, ErrInvalidDriverInfo):
		return ProblemInvalidDriverInfo
	case errors.As(err, &inst):
		return ProblemInvalidInstanceInfo
	}
	return ProblemOther
}
