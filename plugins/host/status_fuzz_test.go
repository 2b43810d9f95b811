package host

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// FuzzFromStatus feeds fromStatus what a misbehaving plugin could send: any
// code, message and detail. It must never panic, never turn a failure into
// success, and keep errors that carry no detail mapped by code alone.
func FuzzFromStatus(f *testing.F) {
	seed, _ := proto.Marshal(&driverv1.ErrorDetail{Kind: wire.KindInvalidDriverInfo, MissingKeys: []string{"a"}})
	f.Add(uint32(codes.InvalidArgument), "bad", seed)
	f.Add(uint32(codes.Unavailable), "eof", []byte(nil))
	f.Add(uint32(codes.Unimplemented), "no", []byte{0xff})
	f.Fuzz(func(t *testing.T, code uint32, msg string, raw []byte) {
		c := codes.Code(code % 17)
		if c == codes.OK {
			return
		}
		st := status.New(c, msg)
		var detail driverv1.ErrorDetail
		if len(raw) > 0 && proto.Unmarshal(raw, &detail) == nil {
			if withDetail, err := st.WithDetails(&detail); err == nil {
				st = withDetail
			}
		}
		err := fromStatus(st.Err())
		if err == nil {
			t.Fatalf("code %v became success", c)
		}
		_ = err.Error()
		_ = plugins.IsRetryable(err)
	})
}
