package live

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/replay/fixture"
)

// An event line that never ends does not take the terminal's memory:
// past maxEventLine the stream is dropped with a message.
func TestLiveReadLineBounded(t *testing.T) {
	r := bufio.NewReaderSize(io.MultiReader(strings.NewReader("data: "), endless{}), 64<<10)
	if _, err := readLine(r); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("endless line: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// An answer over the TUI's read bound is reported as such, not as the
// JSON error of the cut document ("unexpected end of JSON input").
func TestLiveGetTooLarge(t *testing.T) {
	t.Setenv("ABKIT_MAX_BODY", "1KiB")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"pad":"`+strings.Repeat("x", int(fixture.MaxFile()))+`"}`)
	}))
	defer srv.Close()
	var v any
	err := Client{Base: srv.URL}.getJSON(context.Background(), srv.URL+"/x", &v)
	if err == nil || !strings.Contains(err.Error(), "larger than") || strings.Contains(err.Error(), "JSON") {
		t.Fatalf("err %v", err)
	}
}
