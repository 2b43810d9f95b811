package plugins

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// This file is the one place where errors cross the plugin boundary:
// toStatus on the plugin side, fromStatus on the host side. Every other
// file calls these two.

// Error kinds carried in driverv1.ErrorDetail.Kind.
const (
	kindNotSupported      = "not_supported"
	kindInvalidDriverInfo = "invalid_driver_info"
	kindBMCUnreachable    = "bmc_unreachable"
)

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
		code, detail.Kind = codes.Unimplemented, kindNotSupported
	case errors.As(err, &invalid):
		code, detail.Kind = codes.InvalidArgument, kindInvalidDriverInfo
		detail.MissingKeys, detail.InvalidKeys = invalid.Missing, invalid.Invalid
	case errors.Is(err, ErrInvalidDriverInfo):
		code, detail.Kind = codes.InvalidArgument, kindInvalidDriverInfo
	case errors.Is(err, ErrBMCUnreachable):
		code, detail.Kind = codes.Unavailable, kindBMCUnreachable
	}
	st, derr := status.New(code, err.Error()).WithDetails(detail)
	if derr != nil {
		return status.Error(code, err.Error())
	}
	return st.Err()
}

// fromStatus turns an error returned by a generated client back into the
// SDK's errors. codes.Unimplemented without a detail comes from a plugin too
// old to know the RPC: it becomes ErrNotSupported here and nowhere else.
// Unavailable without a detail is a transport failure: *PluginCrashedError.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	var detail *driverv1.ErrorDetail
	for _, d := range st.Details() {
		if ed, ok := d.(*driverv1.ErrorDetail); ok {
			detail = ed
			break
		}
	}
	msg := st.Message()
	if detail == nil {
		switch st.Code() {
		case codes.Unimplemented:
			return &remoteError{msg: fmt.Sprintf("%v: %s", ErrNotSupported, msg), kind: ErrNotSupported}
		case codes.Canceled:
			return &remoteError{msg: msg, kind: context.Canceled}
		case codes.DeadlineExceeded:
			return &remoteError{msg: msg, kind: context.DeadlineExceeded}
		case codes.Unavailable:
			return &PluginCrashedError{Err: errors.New(msg)}
		}
		return &remoteError{msg: msg}
	}
	switch st.Code() {
	case codes.Canceled:
		return &remoteError{msg: msg, kind: context.Canceled}
	case codes.DeadlineExceeded:
		return &remoteError{msg: msg, kind: context.DeadlineExceeded, retryable: detail.Retryable}
	}
	switch detail.Kind {
	case kindNotSupported:
		return &remoteError{msg: msg, kind: ErrNotSupported}
	case kindInvalidDriverInfo:
		if len(detail.MissingKeys)+len(detail.InvalidKeys) > 0 {
			// The plugin's message is kept: it may say more than the keys
			// ("the BMC refused the credentials (HTTP 401)").
			return &remoteError{msg: msg, kind: &InvalidDriverInfoError{Missing: detail.MissingKeys, Invalid: detail.InvalidKeys}}
		}
		return &remoteError{msg: msg, kind: ErrInvalidDriverInfo}
	case kindBMCUnreachable:
		return &remoteError{msg: msg, kind: ErrBMCUnreachable, retryable: true}
	}
	return &remoteError{msg: msg, retryable: detail.Retryable}
}

// remoteError is an error raised inside a plugin, rebuilt on the host: its
// message is the plugin's, its kind a sentinel for errors.Is.
type remoteError struct {
	msg       string
	kind      error
	retryable bool
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() error   { return e.kind }
func (e *remoteError) Retryable() bool { return e.retryable }
