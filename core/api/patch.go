package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/rivetmetal/rivet/core/jsonlimit"
	"github.com/rivetmetal/rivet/core/version"
)

// patchOp is one RFC 6902 operation of a PATCH body.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// DefaultMaxPatchOps is the most operations a JSON-patch body may hold
// when [api] max_patch_operations is not set. Ironic has no cap; clients
// send a handful (a node's whole update is one op per field), and each op
// costs a walk of the document, so a cap keeps one request's work bounded
// by something smaller than the body size limit.
const DefaultMaxPatchOps = 500

// readPatch reads a JSON-patch body: a non-empty list of at most
// MaxPatchOps add, replace and remove operations on absolute RFC 6901
// paths. Anything else is 400. It stops, with the context's error, once
// the client has gone.
func (s *server) readPatch(r *http.Request) ([]patchOp, error) {
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	// One pass checks the body and one splits the list: a body of more
	// ops than allowed is refused before any op is decoded.
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errorf(http.StatusBadRequest, "Invalid JSON body: the body is empty")
	}
	if err := jsonlimit.Check(data, jsonlimit.DefaultMaxDepth); err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid JSON body: %s", jsonlimit.Describe(err))
	}
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil || list == nil {
		return nil, errorf(http.StatusBadRequest, "Invalid patch: the body must be a JSON list of operations")
	}
	if len(list) == 0 {
		return nil, errorf(http.StatusBadRequest, "Invalid patch: the patch must be a non-empty list of operations")
	}
	if len(list) > s.MaxPatchOps {
		return nil, errorf(http.StatusBadRequest, "Invalid patch: %d operations is more than the %d one request may hold "+
			"([api] max_patch_operations); send the changes in several PATCH requests", len(list), s.MaxPatchOps)
	}
	ctx := r.Context()
	ops := make([]patchOp, 0, len(list))
	for i, item := range list {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.patchOpSeen != nil {
			s.patchOpSeen(i)
		}
		op, err := readPatchOp(item)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// readPatchOp reads one operation of a patch list.
func readPatchOp(item json.RawMessage) (patchOp, error) {
	var op patchOp
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil || m == nil {
		return op, errorf(http.StatusBadRequest, "Invalid patch: each operation must be a JSON object with op, path and value")
	}
	for k, v := range m {
		switch k {
		case "op":
			if json.Unmarshal(v, &op.Op) != nil {
				return op, errorf(http.StatusBadRequest, "Invalid patch: 'op' must be a string")
			}
		case "path":
			if json.Unmarshal(v, &op.Path) != nil {
				return op, errorf(http.StatusBadRequest, "Invalid patch: 'path' must be a string")
			}
		case "value":
			op.Value = v
		default:
			return op, errorf(http.StatusBadRequest, "Invalid patch: unknown attribute %q", k)
		}
	}
	switch op.Op {
	case "add", "replace":
		if op.Value == nil {
			return op, errorf(http.StatusBadRequest, "'add' and 'replace' operations need a value")
		}
	case "remove":
		if op.Value != nil {
			return op, errorf(http.StatusBadRequest, "Invalid patch: 'remove' takes no value")
		}
	default:
		return op, errorf(http.StatusBadRequest, "Invalid patch: op %q is not one of add, replace, remove", op.Op)
	}
	if !strings.HasPrefix(op.Path, "/") || len(op.Path) < 2 || strings.HasSuffix(op.Path, "/") {
		return op, errorf(http.StatusBadRequest, "Invalid patch: path %q is not a valid JSON pointer", op.Path)
	}
	if !validEscapes(op.Path) {
		return op, errorf(http.StatusBadRequest, "Invalid patch: path %q has a '~' not followed by 0 or 1; "+
			"a JSON pointer (RFC 6901) writes '~' as ~0 and '/' as ~1", op.Path)
	}
	return op, nil
}

// validEscapes reports whether every '~' of a JSON pointer starts one of
// RFC 6901's two escapes, ~0 and ~1.
func validEscapes(path string) bool {
	for i := 0; i < len(path); i++ {
		if path[i] == '~' && (i+1 == len(path) || (path[i+1] != '0' && path[i+1] != '1')) {
			return false
		}
	}
	return true
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

// applyPatch applies ops in order to doc, as Ironic's apply_jsonpatch: the
// document is parsed and written once for the whole patch, so the work is
// linear in the body and the document. When an op does not apply, the 400
// names it (found by applying ever shorter prefixes of the patch: a
// logarithmic number of passes, on the error path only). Missing parents
// of an add are created; output keeps <, > and & as they are. Numbers stay
// json.Number. A patched document nested deeper than a body may be is 400,
// so what the conductor receives is within its limit.
func applyPatch(ctx context.Context, doc map[string]any, ops []patchOp) (map[string]any, error) {
	cur, err := marshalNoEscape(doc)
	if err != nil {
		return nil, err
	}
	raw, err := marshalNoEscape(ops)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("decode validated patch: %w", err)
	}
	opts := jsonpatch.NewApplyOptions()
	opts.EnsurePathExistsOnAdd = true
	opts.EscapeHTML = false
	next, err := p.ApplyWithOptions(cur, opts)
	if err != nil {
		return nil, failingOp(ctx, p, ops, cur, opts, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := jsonlimit.Check(next, jsonlimit.DefaultMaxDepth); err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid patch: the patched resource would nest deeper than %d levels",
			jsonlimit.DefaultMaxDepth)
	}
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(next))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode patched document: %w", err)
	}
	return out, nil
}

// failingOp finds the first op of p that does not apply to doc (applying
// the whole of p failed with err) and returns the 400 naming it. A prefix
// of p fails exactly when it holds that op, so a binary search over prefix
// lengths finds it.
func failingOp(ctx context.Context, p jsonpatch.Patch, ops []patchOp, doc []byte, opts *jsonpatch.ApplyOptions, err error) error {
	lo, hi := 0, len(p) // p[:lo] applies, p[:hi] fails with err
	for hi-lo > 1 {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		mid := (lo + hi) / 2
		if _, merr := p[:mid].ApplyWithOptions(doc, opts); merr != nil {
			hi, err = mid, merr
		} else {
			lo = mid
		}
	}
	op := ops[hi-1]
	// The message names the op without its value, which may be a secret.
	shown, _ := marshalNoEscape(patchOp{Op: op.Op, Path: op.Path})
	return errorf(http.StatusBadRequest, "Couldn't apply patch '%s'. Reason: %s", shown, patchReason(err))
}

// patchReason words why an op did not apply, without the library's
// internals.
func patchReason(err error) string {
	switch {
	case errors.Is(err, jsonpatch.ErrMissing):
		return "the path does not exist in the resource"
	case errors.Is(err, jsonpatch.ErrInvalidIndex):
		return "the path names a list index the list does not have"
	default:
		return "the path does not lead to a field that can take the operation"
	}
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
