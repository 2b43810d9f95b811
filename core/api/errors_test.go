package api

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rivetmetal/rivet/core/rpc"
)

func TestStatusOf(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := map[string]struct {
		err    error
		status int
		msg    string
		known  bool
	}{
		"api error":         {errorf(http.StatusBadRequest, "bad %s", "x"), 400, "bad x", true},
		"rpc classed":       {&rpc.NoValidHost{Driver: "d"}, 400, (&rpc.NoValidHost{Driver: "d"}).Error(), true},
		"conductor 507":     {&rpc.RemoteError{Class: "StorageFull", Code: 507, Message: "full"}, 507, "full", true},
		"unique":            {&pgconn.PgError{Code: "23505"}, 409, "The resource already exists.", true},
		"database down":     {fmt.Errorf("database: list nodes: %w", refused), 503, msgDBUnavailable, false},
		"database shutdown": {&pgconn.PgError{Code: "57P01", Message: "terminating connection"}, 503, msgDBUnavailable, false},
		"database full":     {fmt.Errorf("save: %w", syscall.ENOSPC), 507, msgStorageFull, false},
		"anything else":     {errors.New("boom at 0xdeadbeef"), 500, "Internal Server Error", false},
		// Issue 31: a killed conductor was "The database cannot be reached".
		"conductor killed": {fmt.Errorf("routed: %w", &rpc.UnreachableError{Host: "cond1:8089", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}), 503,
			"Resource temporarily unavailable, please retry. The conductor cond1:8089 that manages this resource cannot be reached: " +
				"nothing listens at its JSON-RPC address (is rivet conductor running there?). If it has stopped, its nodes move to " +
				"the other conductors once its heartbeat is older than [conductor] heartbeat_timeout.", true},
		"conductor name unresolved": {&rpc.UnreachableError{Host: "cond1.example.com", Err: &net.DNSError{Err: "no such host", Name: "cond1.example.com", IsNotFound: true}}, 503,
			"Resource temporarily unavailable, please retry. The conductor cond1.example.com that manages this resource cannot be reached: " +
				"its name does not resolve from this API host (every API dials a conductor at its [DEFAULT] host: make that name " +
				"resolve to the conductor's [json_rpc] host_ip). If it has stopped, its nodes move to the other conductors once its " +
				"heartbeat is older than [conductor] heartbeat_timeout.", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			status, msg, known := statusOf(tc.err)
			if status != tc.status || msg != tc.msg || known != tc.known {
				t.Errorf("statusOf = %d %q %v, want %d %q %v", status, msg, known, tc.status, tc.msg, tc.known)
			}
		})
	}
}
