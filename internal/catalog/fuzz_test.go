package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func seedYAML(f *testing.F, globs ...string) {
	for _, g := range globs {
		m, _ := filepath.Glob(g)
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("a: &a [x,x]\nb: [*a,*a]\n"))
	f.Add([]byte("inbound: [[[[[[{a: [1]}]]]]]]\n"))
}

// FuzzParseChain: no chain file panics the parser or makes it run away;
// the limits pre-scan and the strict decoder answer every input.
func FuzzParseChain(f *testing.F) {
	seedYAML(f, "testdata/chains/*.yaml", "../../fixtures/*/chain.yaml", "../cli/testdata/hostile/*.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := ParseChain("fuzz.yaml", data)
		if err == nil && cf == nil {
			t.Fatal("nil chain without an error")
		}
		if err == nil {
			for _, e := range append(cf.Inbound, cf.Outbound...) {
				if _, err := e.configJSON(); err != nil {
					t.Fatalf("decoded config does not encode: %v", err)
				}
			}
		}
	})
}

// FuzzDecodeCatalogFile: the file: source's decoder answers every input
// without panicking.
//
// The seeds are the test catalog cut into one document per plugin. go-yaml
// takes about a millisecond per kilobyte, so the whole 1.7 KB catalog as
// one seed held the fuzzer near 250 execs/s; a hundred-byte document per
// plugin keeps every field kind in the corpus at ten times the rate.
func FuzzDecodeCatalogFile(f *testing.F) {
	whole, err := os.ReadFile("testdata/catalog.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, entry := range strings.Split(string(whole), "\n  - name: ")[1:] {
		f.Add([]byte("plugins:\n  - name: " + entry))
	}
	f.Add([]byte("a: &a [x,x]\nb: [*a,*a]\n"))
	f.Add([]byte("inbound: [[[[[[{a: [1]}]]]]]]\n"))
	f.Add([]byte(`{"plugins":[{"name":"x","description":"y","capabilities":{"reads_body":true}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cf File
		_ = DecodeStrict("fuzz.yaml", data, &cf)
	})
}
