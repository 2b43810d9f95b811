package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/rivetmetal/rivet/core/version"
)

// patchOp is one RFC 6902 operation of a PATCH body.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// readPatch reads a JSON-patch body: a non-empty list of add, replace and
// remove operations on absolute paths. Anything else is 400.
func readPatch(r *http.Request) ([]patchOp, error) {
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	var raw []map[string]json.RawMessage
	if err := decodeJSON(data, &raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, errorf(http.StatusBadRequest, "Invalid patch: the patch must be a non-empty list of operations")
	}
	ops := make([]patchOp, 0, len(raw))
	for _, m := range raw {
		var op patchOp
		for k, v := range m {
			switch k {
			case "op":
				if json.Unmarshal(v, &op.Op) != nil {
					return nil, errorf(http.StatusBadRequest, "Invalid patch: 'op' must be a string")
				}
			case "path":
				if json.Unmarshal(v, &op.Path) != nil {
					return nil, errorf(http.StatusBadRequest, "Invalid patch: 'path' must be a string")
				}
			case "value":
				op.Value = v
			default:
				return nil, errorf(http.StatusBadRequest, "Invalid patch: unknown attribute %q", k)
			}
		}
		switch op.Op {
		case "add", "replace":
			if op.Value == nil {
				return nil, errorf(http.StatusBadRequest, "'add' and 'replace' operations need a value")
			}
		case "remove":
			if op.Value != nil {
				return nil, errorf(http.StatusBadRequest, "Invalid patch: 'remove' takes no value")
			}
		default:
			return nil, errorf(http.StatusBadRequest, "Invalid patch: op %q is not one of add, replace, remove", op.Op)
		}
		if !strings.HasPrefix(op.Path, "/") || len(op.Path) < 2 || strings.HasSuffix(op.Path, "/") {
			return nil, errorf(http.StatusBadRequest, "Invalid patch: path %q is not a valid JSON pointer", op.Path)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// root returns the first segment of the op's path, unescaped.
func (op patchOp) root() string {
	seg, _, _ := strings.Cut(op.Path[1:], "/")
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
}

// patchRules say which root fields of a resource PATCH may touch.
type patchRules struct {
	allowed []string // in the order Ironic's message lists them
	since   gated
}

// check follows Ironic's order: 400 "Adding a new attribute" for an add
// of an attribute the resource does not have at all (Ironic before its
// PATCH allow-list), 400 "Cannot patch" for a field outside allowed, then
// 406 for an allowed field newer than v.
func (pr patchRules) check(ops []patchOp, doc map[string]any, v version.Version) error {
	for _, op := range ops {
		root := op.root()
		_, known := doc[root]
		if _, gated := pr.since[root]; gated {
			known = true // hidden at this version, but the resource has it
		}
		if !known && op.Op == "add" && strings.Count(op.Path, "/") == 1 {
			return errorf(http.StatusBadRequest, "Adding a new attribute (%s) to the root of the resource is not allowed", op.Path)
		}
		if !contains(pr.allowed, root) {
			return errorf(http.StatusBadRequest, "Cannot patch %s. Only the following can be updated: %s", op.Path, strings.Join(pr.allowed, ", "))
		}
	}
	for _, op := range ops {
		if since, ok := pr.since[op.root()]; ok && v.Less(since) {
			return errNotAcceptable()
		}
	}
	return nil
}

// applyPatch applies ops one at a time to doc, as Ironic's apply_jsonpatch,
// so an error names the failing op. Missing parents of an add are created;
// output keeps <, > and & as they are. Numbers stay json.Number.
func applyPatch(doc map[string]any, ops []patchOp) (map[string]any, error) {
	cur, err := marshalNoEscape(doc)
	if err != nil {
		return nil, err
	}
	opts := jsonpatch.NewApplyOptions()
	opts.EnsurePathExistsOnAdd = true
	opts.EscapeHTML = false
	for _, op := range ops {
		one, err := marshalNoEscape([]patchOp{op})
		if err != nil {
			return nil, err
		}
		// The message names the op without its value, which may be a secret.
		shown, _ := marshalNoEscape(patchOp{Op: op.Op, Path: op.Path})
		p, err := jsonpatch.DecodePatch(one)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "Couldn't apply patch '%s'. Reason: %v", shown, err)
		}
		next, err := p.ApplyWithOptions(cur, opts)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "Couldn't apply patch '%s'. Reason: %v", shown, err)
		}
		cur = next
	}
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(cur))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode patched document: %w", err)
	}
	return out, nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// changedAttrs returns, as a request body, the allowed root fields whose
// value differs between before and after; a removed field becomes null.
func changedAttrs(before, after map[string]any, allowed []string) (object, error) {
	out := object{}
	for _, f := range allowed {
		a, inAfter := after[f]
		b, err := marshalNoEscape(before[f])
		if err != nil {
			return nil, err
		}
		na, err := marshalNoEscape(a)
		if err != nil {
			return nil, err
		}
		if !inAfter {
			na = []byte("null")
		}
		if !bytes.Equal(b, na) {
			out[f] = na
		}
	}
	return out, nil
}
