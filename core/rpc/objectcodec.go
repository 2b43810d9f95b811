package rpc

import (
	"bytes"
	"encoding/json"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
)

// ObjectCodecFor returns the ObjectCodec of the versioned core: objects go
// out at the effective release's version of their kind (pinned, or latest)
// and come in converted to latest. Unlike Ironic's API, which never
// downgrades what it sends, both sides send at the pinned version: that is
// what keeps a rollback to the older release safe.
func ObjectCodecFor(reg *objects.Registry, pinner *release.Pinner) ObjectCodec {
	return objectCodec{reg: reg, pinner: pinner}
}

type objectCodec struct {
	reg    *objects.Registry
	pinner *release.Pinner
}

func (c objectCodec) Encode(v any) (json.RawMessage, bool, error) {
	obj, ok := v.(objects.Object)
	if !ok {
		return nil, false, nil
	}
	target, err := c.reg.Target(obj.Kind(), c.pinner.Effective())
	if err != nil {
		return nil, true, err
	}
	b, err := c.reg.Encode(obj, target)
	return b, true, err
}

// primitiveMarker is the key every object primitive starts with.
var primitiveMarker = []byte(`"rivet_object.name"`)

func (c objectCodec) IsObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '{' && bytes.Contains(raw, primitiveMarker)
}

func (c objectCodec) Decode(raw json.RawMessage, server bool) (any, error) {
	return c.reg.Decode(raw, server)
}
