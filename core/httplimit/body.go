package httplimit

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// BodyDeadline returns h with a deadline for receiving each request body:
// the whole body must arrive within d of the request's headers, or reading
// it fails with an error IsTimeout recognises and the connection is closed
// once h returns. The deadline is lifted when the body has been read, so a
// handler that then works longer than d (waiting for a conductor, say) is
// not cut off. d <= 0 returns h unchanged.
//
// It is a per-request read deadline (http.ResponseController) rather than
// http.Server.ReadTimeout, which stays set while the handler runs: net/http
// then cancels the request's context when its background read of the idle
// connection times out, ending every request that takes longer than the
// timeout to answer.
func BodyDeadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once the body is read to its end.
type deadlineBody struct {
	io.ReadCloser
	lift func()
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.done {
		b.done = true
		b.lift()
	}
	return n, err
}

// IsTimeout reports whether err, from reading a request body, is the
// body deadline passing.
func IsTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}
