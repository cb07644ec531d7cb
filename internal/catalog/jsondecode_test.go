package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

// The JSON path gives the errors the YAML path gives for the same bytes:
// same line:column, same wording.
func TestJSONErrorsMatchYAMLPath(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"unknown field", "{\"plugins\": [\n  {\"name\": \"a\", \"bogus\": 1}\n]}\n"},
		{"unknown near name", "{\"plugins\": [{\"name\": \"a\", \"descripton\": \"x\"}]}"},
		{"wrong type bool", "{\"plugins\": [\n  {\"name\": \"a\",\n   \"capabilities\": {\"reads_body\": \"maybe\"}}\n]}\n"},
		{"wrong type array", "{\"plugins\": {\"name\": \"a\"}}"},
		{"wrong type object", "{\"plugins\": [{\"families\": {\"a\": 1}}]}"},
		{"duplicate key", "{\"plugins\": [{\"name\": \"a\", \"name\": \"b\"}]}"},
		{"duplicate escaped key", "{\"plugins\": [{\"name\": \"a\", \"n\\u0061me\": \"b\"}]}"},
		{"trailing data", "{\"plugins\": []} x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var viaJSON, viaYAML File
			jerr := DecodeStrict("c.json", []byte(tc.doc), &viaJSON)
			yerr := decodeYAML("c.json", []byte(tc.doc), &viaYAML)
			if jerr == nil || yerr == nil {
				t.Fatalf("JSON path err %v, YAML path err %v; want both to fail", jerr, yerr)
			}
			if jerr.Error() != yerr.Error() {
				t.Errorf("JSON path: %s\nYAML path: %s", jerr, yerr)
			}
		})
	}
}

// What the YAML path accepted, the JSON path still accepts: a number
// where a string is wanted.
func TestJSONAcceptsWhatYAMLDid(t *testing.T) {
	var f File
	if err := DecodeStrict("c.json", []byte(`{"plugins": [{"name": 5}]}`), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Plugins) != 1 || f.Plugins[0].Name != "5" {
		t.Fatalf("got %+v", f)
	}
}

// Malformed JSON that is not YAML either is reported at the offending byte.
func TestJSONSyntaxErrorPositioned(t *testing.T) {
	err := DecodeStrict("c.json", []byte("{\"plugins\": [\n  {\"name\": \"a\"}}\n]}\n"), &File{})
	if err == nil || !strings.HasPrefix(err.Error(), "c.json:2:16: invalid JSON: ") {
		t.Fatalf("err = %v, want it at c.json:2:16", err)
	}
}

// YAML flow style starts with '{' too and still decodes.
func TestYAMLFlowStillDecodes(t *testing.T) {
	var f File
	if err := DecodeStrict("c.yaml", []byte("{plugins: [{name: a, families: [P]}]}"), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Plugins) != 1 || f.Plugins[0].Name != "a" {
		t.Fatalf("got %+v", f)
	}
}

// Both paths decode a saved listing to the same value.
func TestJSONPathSameValue(t *testing.T) {
	data := catalogJSON(t, 50)
	var viaJSON, viaYAML File
	if err := DecodeStrict("c.json", data, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if err := decodeYAML("c.json", data, &viaYAML); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(viaYAML, viaJSON); d != "" {
		t.Errorf("JSON path differs from the YAML path (-yaml +json):\n%s", d)
	}
}

// catalogJSON is a catalog file of n plugins as `abctl catalog list -o
// json` writes it.
func catalogJSON(t testing.TB, n int) []byte {
	t.Helper()
	f := File{Plugins: make([]Descriptor, n)}
	for i := range f.Plugins {
		f.Plugins[i] = Descriptor{
			Name: fmt.Sprintf("plugin-%05d", i), Description: "redacts secrets from request bodies", Version: "1.2.3",
			Families:     []string{"P"},
			Capabilities: &Capabilities{ReadsBody: true, WritesRequestBody: i%2 == 0, Requires: []string{"auth"}},
			Behaviours:   []string{"finish", "stream"},
			Origin:       Origin{Kind: OriginFile, Source: "file:c.json", Path: "c.json"},
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkDecodeCatalog compares the JSON path with the YAML decoder it
// replaces on the same saved listing, in the same run. The "yaml" side is
// the decoder alone, without the YAML limits check: that check refuses a
// 10,000-plugin listing (over 400,000 YAML tokens) before decoding.
func BenchmarkDecodeCatalog(b *testing.B) {
	for _, n := range []int{10, 1_000, 10_000} {
		data := catalogJSON(b, n)
		for _, path := range []struct {
			name string
			dec  func(string, []byte, any) error
		}{{"yaml", yamlOnly}, {"json", DecodeStrict}} {
			b.Run(fmt.Sprintf("plugins=%d/%s", n, path.name), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					var f File
					if err := path.dec("c.json", data, &f); err != nil || len(f.Plugins) != n {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/plugin")
			})
		}
	}
}

func yamlOnly(_ string, data []byte, v any) error {
	return yaml.UnmarshalWithOptions(data, v, yaml.Strict())
}

// jsonPlain finds a repeated key in small and large objects, at any depth,
// and only within one object.
func TestJSONPlainDuplicateKeys(t *testing.T) {
	obj := func(n int, dup bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, "%q: {\"k\": [1, {\"k\": 2}]},", fmt.Sprintf("key%d", i))
		}
		if dup {
			b.WriteString(`"key0": 1,`)
		}
		b.WriteString(`"last": "a\"b"}`)
		return b.String()
	}
	for _, n := range []int{1, 15, 16, 17, 40} {
		if !jsonPlain([]byte(obj(n, false))) {
			t.Errorf("%d distinct keys: reported a duplicate", n)
		}
		if jsonPlain([]byte(obj(n, true))) {
			t.Errorf("%d keys and a repeat: not reported", n)
		}
	}
	if jsonPlain([]byte(strings.Repeat("[", 101) + strings.Repeat("]", 101))) {
		t.Error("nesting deeper than the YAML limit: not sent to the YAML path")
	}
}
