package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/examples/plugins/builtin"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/sdk/gateway"
)

// TestMatchesGolden: the streamed golden comparison accepts the golden
// file byte for byte and nothing else: not a file with a byte changed, cut
// short or with bytes added, nor a missing one (RunSuite then takes the
// full path, which reports the difference). Each is compared with
// read buffers of 1, 7 and 4,096 bytes and the default one, so that the
// comparison is checked across refills too.
func TestMatchesGolden(t *testing.T) {
	ctx := context.Background()
	ch, err := LoadChain(ctx, "../../fixtures/mcp/chain.yaml", gateway.Outbound, builtin.Factories())
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close(ctx)
	f, err := fixture.ReadFile("../../fixtures/mcp/mcp-sse.fixture")
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile("../../fixtures/mcp/golden/mcp-sse.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	changed := bytes.Clone(good)
	changed[len(changed)/2] ^= 1
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"the golden file", good, true},
		{"one byte changed", changed, false},
		{"cut short", good[:len(good)-1], false},
		{"a byte added", append(bytes.Clone(good), '\n'), false},
	} {
		p := filepath.Join(dir, "g.json")
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sc := range []*scratch{{buf: make([]byte, 1)}, {buf: make([]byte, 7)}, {buf: make([]byte, 4096)}, {}, nil} {
			if got := matchesGolden(ctx, ch.Chain, f, p, sc); got != tc.want {
				t.Errorf("%s, buffer of %d: matchesGolden = %v, want %v", tc.name, bufLen(sc), got, tc.want)
			}
		}
	}
	if matchesGolden(ctx, ch.Chain, f, filepath.Join(dir, "missing.json"), nil) {
		t.Error("a missing golden file matched")
	}
}

func bufLen(sc *scratch) int {
	if sc == nil {
		return 0
	}
	return len(sc.buf)
}
