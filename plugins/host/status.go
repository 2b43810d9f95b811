package host

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// This file is the one place where a plugin's errors come back into the
// host: fromStatus undoes plugins' toStatus (package plugins, status.go).

// fromStatus turns an error returned by a generated client back into the
// SDK's errors. codes.Unimplemented without a detail comes from a plugin too
// old to know the RPC: it becomes plugins.ErrNotSupported here and nowhere else.
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
			return &remoteError{msg: fmt.Sprintf("%v: %s", plugins.ErrNotSupported, msg), kind: plugins.ErrNotSupported}
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
	case wire.KindNotSupported:
		return &remoteError{msg: msg, kind: plugins.ErrNotSupported}
	case wire.KindInvalidDriverInfo:
		if len(detail.MissingKeys)+len(detail.InvalidKeys) > 0 {
			// The plugin's message is kept: it may say more than the keys
			// ("the BMC refused the credentials (HTTP 401)").
			return &remoteError{msg: msg, kind: &plugins.InvalidDriverInfoError{Missing: detail.MissingKeys, Invalid: detail.InvalidKeys}}
		}
		return &remoteError{msg: msg, kind: plugins.ErrInvalidDriverInfo}
	case wire.KindBMCUnreachable:
		return &remoteError{msg: msg, kind: plugins.ErrBMCUnreachable, retryable: true}
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
