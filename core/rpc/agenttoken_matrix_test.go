package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/rivetmetal/rivet/core/version"
)

// TestAgentTokenMatrix: get_node_with_token (RPC 1.4) is refused before
// sending under a lower cap, and an unpinned client reaching an older
// conductor gets UnsupportedVersion; heartbeat's agent_token_sha256 (1.4)
// is dropped under a lower cap (the REST API has checked the token) and
// reaches a 1.4 conductor otherwise.
func TestAgentTokenMatrix(t *testing.T) {
	versions := []string{"1.0", "1.3", "1.4"}
	for _, capS := range versions {
		for _, serverS := range versions {
			t.Run(fmt.Sprintf("cap %s/server %s", capS, serverS), func(t *testing.T) {
				capV, serverV := v(capS), v(serverS)
				m := methodsAt(t, serverV)
				srv := NewServer(m, PlainCodec{}, slog.New(slog.DiscardHandler), context.Background())
				var sent map[string]bool
				for _, name := range m.Names() {
					srv.Handle(name, func(_ context.Context, p Params) (any, error) {
						sent = map[string]bool{"agent_token_sha256": p.Has("agent_token_sha256")}
						return nil, nil
					})
				}
				c := NewClient(ConductorMethods(), func() version.Version { return capV }, PlainCodec{}, LocalTransport{Server: srv})
				_, err := c.Call(context.Background(), "local", "get_node_with_token", map[string]any{"node_id": "n1"})
				var ce *CapError
				var re *RemoteError
				switch {
				case capV.Less(v1_4):
					if !errors.As(err, &ce) || ce.Needs != v1_4 {
						t.Errorf("get_node_with_token under cap %s: %v, want a CapError", capV, err)
					}
				case serverV.Less(v1_4):
					if !errors.As(err, &re) || re.Class != "UnsupportedVersion" {
						t.Errorf("get_node_with_token to a %s conductor: %v", serverV, err)
					}
				case err != nil:
					t.Errorf("get_node_with_token: %v", err)
				}
				sent = nil
				_, err = c.Call(context.Background(), "local", "heartbeat",
					map[string]any{"node_id": "n1", "callback_url": "http://a:9999", "agent_version": "", "agent_token_sha256": "d"})
				wantDigest := v1_4.ServedBy(capV) && v1_4.ServedBy(serverV)
				switch {
				case v1_4.ServedBy(capV) && !v1_4.ServedBy(serverV):
					// An unpinned client talking to an older conductor: refused, not degraded.
					if !errors.As(err, &re) {
						t.Errorf("heartbeat 1.4 to a %s conductor: %v", serverV, err)
					}
				case err != nil:
					t.Errorf("heartbeat: %v", err)
				case sent["agent_token_sha256"] != wantDigest:
					t.Errorf("agent_token_sha256 sent: %v, want %v", sent["agent_token_sha256"], wantDigest)
				}
			})
		}
	}
}
