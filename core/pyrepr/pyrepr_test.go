package pyrepr

import (
	"bufio"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/test/testenv"
)

// The expected texts are what CPython 3.11 printed for
// repr(json.loads(text)).
func TestNumber(t *testing.T) {
	for text, want := range map[string]string{
		"0": "0", "-0": "0", "10": "10", "-12": "-12",
		"123456789012345678": "123456789012345678", "9007199254740993": "9007199254740993",
		"1e2": "100.0", "1E2": "100.0", "1.50": "1.5", "-0.0": "-0.0", "-1.0": "-1.0",
		"0.0001": "0.0001", "0.00001": "1e-05", "2.5e-5": "2.5e-05", "1e-7": "1e-07",
		"1e15": "1000000000000000.0", "1e16": "1e+16", "1e22": "1e+22", "1.5e300": "1.5e+300",
		"1e400": "inf", "-1e400": "-inf", "0.1": "0.1", "12345.678": "12345.678",
		"not a number": "not a number",
	} {
		if got := Number(text); got != want {
			t.Errorf("Number(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestValue(t *testing.T) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(`{"b": [1, 2.0, "it's", "say \"hi\"", null, true], "a": {"x": 1e2}, "c": "tab\there"}`))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := `{'a': {'x': 100.0}, 'b': [1, 2.0, "it's", 'say "hi"', None, True], 'c': 'tab\there'}`
	if got := Value(doc); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without UseNumber an integral float64 was (almost always) a JSON
	// integer.
	for v, want := range map[any]string{float64(4): "4", 4.5: "4.5", float64(1e20): "1e+20", false: "False", 7: "7", "it's \"x\"": `'it\'s "x"'`} {
		if got := Value(v); got != want {
			t.Errorf("Value(%v) = %s, want %s", v, got, want)
		}
	}
	if got := Value([]string{"a", "b'"}); got != `['a', "b'"]` {
		t.Errorf("[]string: %s", got)
	}
}

// TestFloatMatchesPython compares Float and String with CPython's repr on
// random values: doubles of every magnitude, short decimals and strings
// with quotes and control characters.
func TestFloatMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Unavailable(t, "python3 is not installed (apt install python3)")
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var floats []float64
	for len(floats) < 3000 {
		var f float64
		switch len(floats) % 3 {
		case 0:
			f = math.Float64frombits(rng.Uint64())
		case 1:
			f = float64(rng.IntN(2_000_000)-1_000_000) * math.Pow(10, float64(rng.IntN(44)-22))
		default:
			f = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(10)-5))
		}
		if !math.IsNaN(f) {
			floats = append(floats, f)
		}
	}
	alphabet := []rune("ab'\"\\\n\t\r\x01\x7f é\u00a0\u200b\u2028\u0085\ue000\U0001f600\U0010ffff")
	var strs []string
	for range 500 {
		r := make([]rune, rng.IntN(6))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		strs = append(strs, string(r))
	}
	var in strings.Builder
	for _, f := range floats {
		in.WriteString(strconv.FormatUint(math.Float64bits(f), 10) + "\n")
	}
	enc, _ := json.Marshal(strs)
	in.Write(enc)
	in.WriteString("\n")
	const prog = `import json, struct, sys
lines = sys.stdin.read().split("\n")
for l in lines[:-2]:
    print(repr(struct.unpack("<d", struct.pack("<Q", int(l)))[0]))
for s in json.loads(lines[-2]):
    print(json.dumps(repr(s)))
`
	cmd := exec.Command(py, "-c", prog)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	bad, i := 0, 0
	for ; sc.Scan(); i++ {
		var got, want string
		if i < len(floats) {
			got, want = Float(floats[i]), sc.Text()
		} else {
			got = String(strs[i-len(floats)])
			if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
				t.Fatal(err)
			}
		}
		if got != want {
			if bad++; bad <= 10 {
				t.Errorf("line %d: got %q, Python %q", i, got, want)
			}
		}
	}
	if i != len(floats)+len(strs) {
		t.Errorf("python3 printed %d lines for %d values", i, len(floats)+len(strs))
	}
	if bad > 0 {
		t.Errorf("%d of %d differ", bad, len(floats)+len(strs))
	}
}

func TestJSON(t *testing.T) {
	for text, want := range map[string]string{
		`5`: "5", ` 1e2 `: "100.0", `true`: "True", `null`: "None", `"it's"`: `"it's"`,
		`{"b": [1.0], "a": {}}`: `{'a': {}, 'b': [1.0]}`, `{"a": 1} {}`: `{"a": 1} {}`, ` not json `: "not json",
	} {
		if got := JSON([]byte(text)); got != want {
			t.Errorf("JSON(%q) = %s, want %s", text, got, want)
		}
	}
}
