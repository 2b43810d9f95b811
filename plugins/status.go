package plugins

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// This file is the one place where a driver's errors leave the plugin:
// toStatus. The host turns them back with fromStatus (plugins/host,
// status.go); the error kinds both use are in plugins/internal/wire.

// toStatus turns a driver's error into a gRPC status error carrying an
// ErrorDetail with the error's kind and retry-ability. Every error gets a
// detail, so a bare Unavailable on the host always means a broken transport,
// never a driver's own gRPC call failing.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	code := codes.Unknown
	detail := &driverv1.ErrorDetail{Retryable: IsRetryable(err)}
	var invalid *InvalidDriverInfoError
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, ErrNotSupported):
		code, detail.Kind = codes.Unimplemented, wire.KindNotSupported
	case errors.As(err, &invalid):
		code, detail.Kind = codes.InvalidArgument, wire.KindInvalidDriverInfo
		detail.MissingKeys, detail.InvalidKeys = invalid.Missing, invalid.Invalid
	case errors.Is(err, ErrInvalidDriverInfo):
		code, detail.Kind = codes.InvalidArgument, wire.KindInvalidDriverInfo
	case errors.Is(err, ErrBMCUnreachable):
		code, detail.Kind = codes.Unavailable, wire.KindBMCUnreachable
	}
	st, derr := status.New(code, err.Error()).WithDetails(detail)
	if derr != nil {
		return status.Error(code, err.Error())
	}
	return st.Err()
}
