package workers

import (
	"errors"
	"net/http"
)

// ErrNoFreeWorker is returned by TryAPI when every worker an API task may
// use is busy. It carries Ironic's class and HTTP code (it satisfies the
// rpc.Classed shape without importing it) and is safe to retry later.
var ErrNoFreeWorker error = noFreeWorker{}

// ErrClosed is returned once Close has been called: the conductor is
// shutting down and the caller should retry on another conductor.
var ErrClosed = errors.New("worker pool closed: conductor is shutting down")

type noFreeWorker struct{}

func (noFreeWorker) Error() string {
	return "Requested action cannot be performed due to lack of free conductor workers."
}

// ErrorClass is Ironic's exception class for this condition.
func (noFreeWorker) ErrorClass() string { return "NoFreeConductorWorker" }

// HTTPCode is the status the REST API answers with.
func (noFreeWorker) HTTPCode() int { return http.StatusServiceUnavailable }

// Retryable reports that the same request may succeed later.
func (noFreeWorker) Retryable() bool { return true }
