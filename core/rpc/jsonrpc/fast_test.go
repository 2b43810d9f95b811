package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/internal/fuzzcorpus"
	"github.com/rivetmetal/rivet/core/jsonlimit"

	"github.com/rivetmetal/rivet/core/rpc"
)

// The fast paths of the JSON-RPC envelope (parseEnvelope's splitEnvelope,
// splitParams and splitRequestID, requestBody's appendRequestBody,
// decodeResponse's splitResponse, and writeResult) must give exactly what
// encoding/json gives. The functions below are the code before them, kept as
// the reference (its error messages worded as the server's now are); the tests and fuzz targets run both on the same input and
// fail on any difference, and the benchmarks measure one against the other.

// parseEnvelopeStd is parseEnvelope before its fast path.
func parseEnvelopeStd(body []byte) (*rpc.Request, json.RawMessage, *wireError) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, nil, &wireError{Code: codeInvalidRequest, Message: "Batch requests are not supported"}
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, nil, &wireError{Code: codeParseError, Message: "Parse error: " + jsonlimit.Describe(err)}
	}
	id := env.ID
	if err := jsonlimit.Check(body, jsonlimit.RPCMaxDepth); err != nil {
		return nil, nil, &wireError{Code: codeInvalidRequest, Message: "Invalid request: " + jsonlimit.Describe(err)}
	}
	strict := json.NewDecoder(bytes.NewReader(body))
	strict.DisallowUnknownFields()
	if err := strict.Decode(new(envelope)); err != nil {
		return nil, nil, &wireError{Code: codeInvalidRequest, Message: "Invalid request: " + jsonlimit.Describe(err)}
	}
	if env.JSONRPC != "2.0" {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: `Expected jsonrpc: "2.0"`}
	}
	if env.Method == "" {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: "Missing method"}
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(env.Params, &params); err != nil || params == nil {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: "Params must be an object"}
	}
	req := &rpc.Request{Method: env.Method, Params: params, Cast: len(id) == 0 || string(id) == "null"}
	if raw, ok := params[rpc.VersionParam]; ok {
		if err := json.Unmarshal(raw, &req.Version); err != nil {
			return nil, id, &wireError{Code: codeInvalidParams, Message: "rpc.version must be a string"}
		}
		delete(params, rpc.VersionParam)
	}
	if raw, ok := params[rpc.ContextParam]; ok {
		var rc struct {
			RequestID string `json:"request_id"`
			User      string `json:"user"`
		}
		_ = json.Unmarshal(raw, &rc)
		req.RequestID, req.User = rc.RequestID, rc.User
		delete(params, rpc.ContextParam)
	}
	return req, id, nil
}

// requestBodyStd is requestBody before its fast path.
func requestBodyStd(req *rpc.Request) ([]byte, error) {
	params := make(map[string]json.RawMessage, len(req.Params)+2)
	for k, v := range req.Params {
		params[k] = v
	}
	params[rpc.VersionParam], _ = json.Marshal(req.Version)
	rc := map[string]string{"request_id": req.RequestID}
	if req.User != "" {
		rc["user"] = req.User
	}
	params[rpc.ContextParam], _ = json.Marshal(rc)
	env := map[string]any{"jsonrpc": "2.0", "method": req.Method, "params": params}
	if !req.Cast {
		env["id"] = req.RequestID
	}
	body, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("rpc %s: encode: %w", req.Method, err)
	}
	return body, nil
}

// decodeResponseStd is the reply decoding of Send before its fast path.
func decodeResponseStd(data []byte) (response, error) {
	var r response
	err := json.Unmarshal(data, &r)
	return r, err
}

// envelopeCases are request bodies that stress what encoding/json does
// quietly: escapes, whitespace, case-insensitive keys, repeated keys, null
// and missing members, every kind of id, unicode and HTML characters.
var envelopeCases = []string{
	`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n1","rpc.version":"1.0","context":{"request_id":"req-1"}},"id":"req-1"}`,
	`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n1","rpc.version":"1.0","context":{"request_id":"req-1"}}}`,
	" \n\t{ \"jsonrpc\" : \"2.0\" ,\r\n \"method\":\"power\" , \"params\" : { \"node_id\" : [ 1 , 2 ] , \"rpc.version\" : \"1.0\" } , \"id\" : { \"a\" : 1 } } \n",
	`{"jsonrpc":"2.0","method":"power","params":{},"id":null}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":7}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":-1.5e3}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":true}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":[1,{"x":null}]}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":""}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":"\u2028<&>"}`,
	`{"jsonrpc":"2.0","method":"power","params":null,"id":1}`,
	`{"jsonrpc":"2.0","method":"power","id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":[1],"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":"x","id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":5,"id":1}`,
	`{"jsonrpc":"2.0","method":"","params":{},"id":1}`,
	`{"jsonrpc":"2.0","params":{},"id":1}`,
	`{"jsonrpc":"1.0","method":"power","params":{},"id":1}`,
	`{"method":"power","params":{},"id":1}`,
	`{"jsonrpc":null,"method":"power","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":null,"params":{},"id":1}`,
	`{"jsonrpc":2,"method":"power","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":["power"],"params":{},"id":1}`,
	`{"jsonrpc":"2\u002e0","method":"po\u0077er","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":"pow\"er","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":"ünïcödé","params":{"ключ":"значение"},"id":"ид"}`,
	`{"jsonrpc":"2.0","method":"<b>&amp;</b>","params":{"<":">"},"id":"&"}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\u2028\u2029\",\"params\":{\"\u2028\":\"\u2029\"},\"id\":1}",
	`{"JSONRPC":"2.0","method":"power","params":{},"id":1}`,
	`{"jsonrpc":"2.0","Method":"power","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","PARAMS":{},"Id":1}`,
	`{"jsonrpc":"2.0","method":"power","method":"x","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","Method":"x","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"a":1,"a":2},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"a":1,"\u0061":2},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"\u0061":1},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":1,"extra":true}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"\u0069d":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"rpc.version":5},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"rpc.version":null},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"rpc.version":"1.\u0030"},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"rpc.version":{"a":1}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":null},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":"x"},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{"REQUEST_ID":"r"}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{"request_id":"r","user":"u"}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{"request_id":5}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{"request_id":null}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{"request_id":"r\n"}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{"request_id":"r","request_id":"s"}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{"context":{"Request_ID":"r","request_id":"s"}},"id":1}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":1} {}`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":1}x`,
	`{"jsonrpc":"2.0","method":"power","params":{},"id":1`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"pow\xffer\",\"params\":{},\"id\":1}",
	`{"jsonrpc":"2.0","method":"power","params":{"a":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `},"id":1}`,
	`[{"jsonrpc":"2.0"}]`, ` [`, `{"jsonrpc":`, `null`, `{}`, `"x"`, `1`, ``, ` `, `{"a":1}`,
}

// wireEnvelopes are envelopes carrying the golden object primitives, as
// the API sends them to a conductor.
func wireEnvelopes(t testing.TB) [][]byte {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "..", "objects", "testdata", "*", "*.json"))
	var out [][]byte
	for _, p := range paths {
		prim, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		req := &rpc.Request{Method: "create_node", Version: "1.0", RequestID: "req-1be26c0b", Params: map[string]json.RawMessage{"node": prim}}
		body, err := requestBodyStd(req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, body)
		// The same primitive as it was written (indented, not compacted).
		out = append(out, []byte(`{"jsonrpc":"2.0","method":"update_node","params":{"node":`+string(prim)+`,"rpc.version":"1.0"},"id":"r"}`))
	}
	return out
}

func envelopeSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, s := range envelopeCases {
		seeds = append(seeds, []byte(s))
	}
	seeds = append(seeds, wireEnvelopes(t)...)
	return append(seeds, fuzzcorpus.Bytes(t, filepath.Join("testdata", "fuzz", "FuzzJSONRPCHandler"))...)
}

// checkParseEnvelope fails t when parseEnvelope and parseEnvelopeStd read
// body differently.
func checkParseEnvelope(t *testing.T, body []byte) {
	t.Helper()
	// Each gets its own copy: neither may depend on what the other does.
	fastReq, fastID, fastErr := parseEnvelope(bytes.Clone(body))
	slowReq, slowID, slowErr := parseEnvelopeStd(bytes.Clone(body))
	if !reflect.DeepEqual(fastReq, slowReq) || !reflect.DeepEqual(fastID, slowID) || !reflect.DeepEqual(fastErr, slowErr) {
		t.Fatalf("parseEnvelope(%q)\nfast: %s %q %+v\nslow: %s %q %+v", body, dumpRequest(fastReq), fastID, fastErr, dumpRequest(slowReq), slowID, slowErr)
	}
	// A parameter taken from the body by the fast path cannot grow into it.
	if env, ok := splitEnvelope(body); ok {
		if params, ok := splitParams(env.Params); ok {
			for k, v := range params {
				if cap(v) != len(v) {
					t.Fatalf("parseEnvelope(%q): param %s can grow into the body", body, k)
				}
			}
		}
	}
}

func dumpRequest(r *rpc.Request) string {
	if r == nil {
		return "<nil>"
	}
	params := map[string]string{}
	for k, v := range r.Params {
		params[k] = string(v)
	}
	return fmt.Sprintf("{Method:%q Version:%q RequestID:%q User:%q Cast:%v Params:%q}", r.Method, r.Version, r.RequestID, r.User, r.Cast, params)
}

func TestParseEnvelopeFastMatchesStd(t *testing.T) {
	for _, body := range envelopeSeeds(t) {
		checkParseEnvelope(t, body)
	}
}

// The usual envelope, as the client writes it, does take the fast path
// (a fast path that always fell back would pass the test above).
func TestParseEnvelopeTakesFastPath(t *testing.T) {
	for _, body := range wireEnvelopes(t) {
		env, ok := splitEnvelope(body)
		if !ok {
			t.Fatalf("splitEnvelope(%.60q…) fell back", body)
		}
		if _, ok := splitParams(env.Params); !ok {
			t.Fatalf("splitParams(%.60q…) fell back", env.Params)
		}
	}
}

func FuzzParseEnvelopeFast(f *testing.F) {
	for _, s := range envelopeSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkParseEnvelope)
}

// requestCases are requests whose envelope json.Marshal writes with
// escapes, or not at all, beside the usual ones.
func requestCases(t testing.TB) []*rpc.Request {
	params := func(kv ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = json.RawMessage(kv[i+1])
		}
		return m
	}
	reqs := []*rpc.Request{
		{Method: "power", Version: "1.0", RequestID: "req-1", Params: params("node_id", `"n1"`)},
		{Method: "power", Version: "1.0", RequestID: "req-1", Params: params("node_id", `"n1"`), Cast: true},
		{Method: "power", Version: "1.0", RequestID: "req-1", User: "alice", Params: params("node_id", `"n1"`)},
		{Method: "power", Version: "1.0", RequestID: "req-1", User: "a<b", Params: params("node_id", `"n1"`)},
		{Method: "power", Version: "1.0", RequestID: "", Params: nil},
		{Method: "", Version: "", RequestID: "", Params: params()},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("rpc.version", `"9.9"`, "context", `{"request_id":"x"}`, "a", `1`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("b", `{"x":[1,2,{"y":null}]}`, "a", `true`, "Z", `-1.5e3`, "rpc.versio", `""`, "contexts", `[]`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", ` 1`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `{"x": 1}`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `" spaces in a string "`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `"<b>"`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `"a&b"`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", "\"\u2028\"")},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", "\"\u2029\"")},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `"\u2028 \u003c \""`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `"ünïcödé"`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", "\"\xff\"")},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `nul`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", ``)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: map[string]json.RawMessage{"a": nil}},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("a", `1 2`)},
		{Method: "power", Version: "1.0", RequestID: "r", Params: params("<", `1`, "é", `2`, "\u2028", `3`)},
		{Method: "pow<er", Version: "1.0", RequestID: "r", Params: params()},
		{Method: "power", Version: "1.0&", RequestID: "r", Params: params()},
		{Method: "power", Version: "1.0", RequestID: "r\"", Params: params()},
		{Method: "pöwer", Version: "1.0", RequestID: "r\n", Params: params()},
		{Method: "power", Version: "1.0", RequestID: "r\xff", Params: params()},
	}
	for _, body := range wireEnvelopes(t) {
		var env struct {
			Method string
			Params map[string]json.RawMessage
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, &rpc.Request{Method: env.Method, Version: "1.3", RequestID: "req-1be26c0b", Params: env.Params})
	}
	return reqs
}

// checkRequestBody fails t when requestBody and requestBodyStd write req
// differently.
func checkRequestBody(t *testing.T, req *rpc.Request) {
	t.Helper()
	fast, fastErr := requestBody(req)
	slow, slowErr := requestBodyStd(req)
	if !bytes.Equal(fast, slow) || fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
		t.Fatalf("requestBody(%s)\nfast: %q %v\nslow: %q %v", dumpRequest(req), fast, fastErr, slow, slowErr)
	}
}

func TestRequestBodyFastMatchesStd(t *testing.T) {
	for _, req := range requestCases(t) {
		checkRequestBody(t, req)
	}
	// What Prepare builds takes the fast path.
	for _, req := range requestCases(t)[:2] {
		if _, ok := appendRequestBody(nil, req); !ok {
			t.Fatalf("appendRequestBody(%s) fell back", dumpRequest(req))
		}
	}
}

// FuzzRequestBodyFast builds a request from arbitrary strings and up to
// three arbitrary parameter values (their names chosen among a fixed set
// and one arbitrary name) and holds requestBody to json.Marshal's bytes
// and errors.
func FuzzRequestBodyFast(f *testing.F) {
	for _, r := range requestCases(f) {
		var vals [3][]byte
		var names [3]string
		i := 0
		for k, v := range r.Params {
			if i < 3 {
				names[i], vals[i] = k, v
				i++
			}
		}
		f.Add(r.Method, r.Version, r.RequestID, r.Cast, uint8(i), names[0], vals[0], vals[1], vals[2])
	}
	f.Fuzz(func(t *testing.T, method, version, requestID string, cast bool, n uint8, name string, v0, v1, v2 []byte) {
		names := []string{name, "rpc.version", "context", "node", "a"}
		req := &rpc.Request{Method: method, Version: version, RequestID: requestID, Cast: cast, Params: map[string]json.RawMessage{}}
		for i, v := range [][]byte{v0, v1, v2}[:int(n)%4] {
			req.Params[names[(int(n)/4+i)%len(names)]] = v
		}
		checkRequestBody(t, req)
	})
}

// responseCases are reply bodies: the success replies a conductor writes,
// error replies, and what encoding/json reads quietly.
func responseCases(t testing.TB) [][]byte {
	cases := []string{
		`{"jsonrpc":"2.0","result":{"a":1},"id":"req-1"}`,
		`{"jsonrpc":"2.0","result":null,"id":"req-1"}`,
		`{"jsonrpc":"2.0","id":"req-1"}`,
		`{"jsonrpc":"2.0","result":"x"}`,
		" {\n \"jsonrpc\" : \"2.0\" , \"result\" : [ 1 , { \"b\" : 2 } ] , \"id\" : 7 }\n",
		`{"jsonrpc":"2.0","error":{"code":-32601,"message":"no such method"},"id":"req-1"}`,
		`{"jsonrpc":"2.0","error":null,"result":1,"id":1}`,
		`{"jsonrpc":"2.0","result":1,"result":2,"id":1}`,
		`{"jsonrpc":"2.0","result":1,"Result":2,"id":1}`,
		`{"jsonrpc":"2.0","RESULT":1,"id":1}`,
		`{"jsonrpc":"2.0","result":1,"id":1,"extra":1}`,
		`{"jsonrpc":"2\u002e0","result":1,"id":1}`,
		`{"jsonrpc":null,"result":1,"id":1}`,
		`{"jsonrpc":2,"result":1,"id":1}`,
		"{\"jsonrpc\":\"2.\xff\",\"result\":\"\xff\",\"id\":1}",
		`{"jsonrpc":"2.0","result":"\u2028<>&","id":"ид"}`,
		`{"jsonrpc":"2.0","result":1,"id":1} x`,
		`{"jsonrpc":"2.0","result":1,"id":1`,
		`{}`, `null`, `[]`, `"x"`, ``, `<html>`,
	}
	var out [][]byte
	for _, c := range cases {
		out = append(out, []byte(c))
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "objects", "testdata", "*", "*.json"))
	for _, p := range paths {
		prim, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, []byte(`{"jsonrpc":"2.0","result":`+string(prim)+`,"id":"req-1be26c0b"}`+"\n"))
	}
	return out
}

func checkDecodeResponse(t *testing.T, data []byte) {
	t.Helper()
	fast, fastErr := decodeResponse(bytes.Clone(data))
	slow, slowErr := decodeResponseStd(bytes.Clone(data))
	if !reflect.DeepEqual(fast, slow) || fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
		t.Fatalf("decodeResponse(%q)\nfast: %+v %v\nslow: %+v %v", data, fast, fastErr, slow, slowErr)
	}
	if r, ok := splitResponse(data); ok && cap(r.Result) != len(r.Result) {
		t.Fatalf("decodeResponse(%q): the result can grow into the body", data)
	}
}

func TestDecodeResponseFastMatchesStd(t *testing.T) {
	for _, data := range responseCases(t) {
		checkDecodeResponse(t, data)
	}
	if _, ok := splitResponse(responseCases(t)[0]); !ok {
		t.Fatal("splitResponse fell back on a success reply")
	}
}

func FuzzDecodeResponseFast(f *testing.F) {
	for _, data := range responseCases(f) {
		f.Add(data)
	}
	f.Fuzz(checkDecodeResponse)
}

// resultCases are results and ids for writeResult: what Dispatch returns
// (compact JSON, objects), and what json.Marshal would rewrite or refuse.
func resultCases(t testing.TB) (results, ids [][]byte) {
	for _, s := range []string{`null`, `{"a":1}`, `"x"`, `[1,{"b":[]}]`, `{"a": 1}`, " 1", `"<&>"`, "\"\u2028\"", "\"\u2029\"",
		`"\u2028\u003c"`, `"ünï"`, "\"\xff\"", `{"a":1`, `nul`, ``, `{"a":"\"}"}`} {
		results = append(results, []byte(s))
	}
	results = append(results, nil)
	for _, data := range responseCases(t) {
		if r, err := decodeResponseStd(data); err == nil && len(r.Result) > 0 {
			results = append(results, r.Result)
		}
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "objects", "testdata", "*", "*.json"))
	for _, p := range paths {
		prim, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, prim)
	}
	for _, s := range []string{`"req-1be26c0b"`, `1`, `null`, `"<b>"`, `[1, 2]`, `{"a":"\u2028"}`, `"ид"`, ``, `x`} {
		ids = append(ids, []byte(s))
	}
	return results, append(ids, nil)
}

// checkWriteResult fails t when writeResult and writeJSON answer
// differently: status, headers or body bytes.
func checkWriteResult(t *testing.T, res, id []byte) {
	t.Helper()
	fast, slow := httptest.NewRecorder(), httptest.NewRecorder()
	writeResult(fast, res, id)
	writeJSON(slow, http.StatusOK, response{JSONRPC: "2.0", Result: res, ID: id})
	if fast.Code != slow.Code || !reflect.DeepEqual(fast.Header(), slow.Header()) || !bytes.Equal(fast.Body.Bytes(), slow.Body.Bytes()) {
		t.Fatalf("writeResult(%q, %q)\nfast: %d %v %q\nslow: %d %v %q", res, id, fast.Code, fast.Header(), fast.Body, slow.Code, slow.Header(), slow.Body)
	}
}

func TestWriteResultFastMatchesStd(t *testing.T) {
	results, ids := resultCases(t)
	for _, res := range results {
		for _, id := range ids {
			checkWriteResult(t, res, id)
		}
	}
}

func FuzzWriteResultFast(f *testing.F) {
	results, ids := resultCases(f)
	for i, res := range results {
		f.Add(res, ids[i%len(ids)])
	}
	f.Fuzz(checkWriteResult)
}
