package cli

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixtureImportSSENotText: an --sse body that is not UTF-8 text is
// refused with exit 3, an error naming the file and the first bad byte's
// offset and pointing at --json or --har, and no fixture written. Text
// bodies still import.
func TestFixtureImportSSENotText(t *testing.T) {
	random := make([]byte, 4096)
	rand.Read(random)
	random[0] = 0xff // never the start of a UTF-8 sequence: offset 0 for sure
	tests := []struct {
		name string
		body []byte
		code int
		want []string // on stderr
	}{
		{"random", random, ExitRead, []string{"byte offset 0:", "invalid UTF-8 byte 0xff"}},
		{"nul", []byte("data: {}\n\n\x00"), ExitRead, []string{"byte offset 10:", "NUL byte 0x00"}},
		{"control", []byte("data: \x07\n\n"), ExitRead, []string{"byte offset 6:", "control byte 0x07"}},
		{"text", []byte("data: {\"é\":1}\r\n\r\n\tdata: x\n\n"), 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "body.sse"), filepath.Join(dir, "x.fixture")
			if err := os.WriteFile(in, tc.body, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runAbctl(t, "fixture", "import", "--sse", in, "--out", out)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			_, statErr := os.Stat(out)
			if tc.code == 0 {
				if statErr != nil || strings.TrimSpace(stdout) != out {
					t.Fatalf("text body not imported: %v; stdout %q", statErr, stdout)
				}
				return
			}
			if !os.IsNotExist(statErr) {
				t.Errorf("fixture written for a refused body (stat: %v)", statErr)
			}
			if stdout != "" {
				t.Errorf("stdout on error: %q", stdout)
			}
			for _, w := range append(tc.want, "--sse "+in+":", "use --json or --har for other bodies") {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}
