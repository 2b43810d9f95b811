package plugins

import (
	"context"
	"errors"
	"fmt"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// validationServer serves rivet.driver.v1.Validation (plugin side) under
// every protocol major; what the driver lacks answers ErrNotSupported.
type validationServer struct {
	driverv1.UnimplementedValidationServer
	driver Driver
	info   Info
}

func (s *validationServer) Properties(context.Context, *driverv1.Empty) (*driverv1.PropertiesResponse, error) {
	d, ok := s.driver.(PropertyDeclarer)
	if !ok {
		return nil, toStatus(fmt.Errorf("plugin %s: properties: %w", s.info.Name, ErrNotSupported))
	}
	out := &driverv1.PropertiesResponse{}
	for _, p := range d.Properties() {
		out.Properties = append(out.Properties, &driverv1.Property{Name: p.Name, Required: p.Required, Description: p.Description})
	}
	return out, nil
}

func (s *validationServer) Validate(ctx context.Context, req *driverv1.ValidateRequest) (*driverv1.ValidateResponse, error) {
	d, ok := s.driver.(Validator)
	if !ok {
		return nil, toStatus(fmt.Errorf("plugin %s: validate: %w", s.info.Name, ErrNotSupported))
	}
	err := d.Validate(ctx, nodeFromProto(req.GetNode()), Interface(req.GetInterface()))
	return validateResponse(err), nil
}

// validateResponse carries a Validate error's problem, reason and keys.
func validateResponse(err error) *driverv1.ValidateResponse {
	out := &driverv1.ValidateResponse{Problem: string(ClassifyValidation(err))}
	if err == nil {
		return out
	}
	out.Reason = err.Error()
	var di *InvalidDriverInfoError
	var ii *InvalidInstanceInfoError
	switch {
	case errors.As(err, &di):
		out.MissingKeys, out.InvalidKeys = di.Missing, di.Invalid
	case errors.As(err, &ii):
		out.MissingKeys, out.InvalidKeys = ii.Missing, ii.Invalid
	}
	return out
}
