package piiredactor_test

import (
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/piiredactor"
)

// BenchmarkRedact scans a 4 KiB JSON body with one of each kind.
func BenchmarkRedact(b *testing.B) {
	p, err := piiredactor.New(piiredactor.Config{})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"content":"` + strings.Repeat("lorem ipsum dolor sit amet 12 34 ", 120) +
		`mail a@b.io, call 555-123-4567, card 4111 1111 1111 1111"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, n := p.Redact(body); len(n) != 3 {
			b.Fatal(n)
		}
	}
}
