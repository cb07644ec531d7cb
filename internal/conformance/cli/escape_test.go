package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// What a real plugin process writes reaches the operator escaped, in the
// text and the JSON report alike (issue 26 item 11: 72 raw ESC bytes once
// cleared the terminal and set its title): escape-stdout writes escape
// sequences to stdout before its handshake, which conformance quotes in
// its error; escape-panic panics with them, recovered (the answer's text)
// and not (a crash: the Go runtime's panic text on its stderr). Nothing
// printed holds a C0 control byte other than LF and TAB, DEL or a C1
// control; the escaped form is shown instead.
func TestRunEscapesPluginBytes(t *testing.T) {
	for _, c := range []struct {
		plugin string
		code   int
		want   []string // in stdout or stderr, each in the output's escaped form
	}{
		{"escape-stdout", ExitLoad, []string{"Unrecognized remote plugin message: " + escapedText}},
		{"escape-panic", ExitFail, []string{"panicked: escape-panic: %s on purpose", "panic: escape-panic: %s on purpose, crashing"}},
	} {
		for _, format := range []string{"text", "json"} {
			t.Run(c.plugin+"/"+format, func(t *testing.T) {
				code, out, errs := run(t, "run", "--plugin", filepath.Join(bin, c.plugin), "-o", format, "-v", "--trace", "--timeout", "1m")
				if code != c.code {
					t.Fatalf("exit %d, want %d\nstdout:\n%.2000s\nstderr:\n%.2000s", code, c.code, out, errs)
				}
				for name, s := range map[string]string{"stdout": out, "stderr": errs} {
					if i, r := rawControl(s); i >= 0 {
						t.Errorf("%s holds raw control character %U at byte %d: %q", name, r, i, s[max(0, i-80):min(len(s), i+80)])
					}
				}
				escaped := escapedText
				if format == "json" && c.code != ExitLoad { // a load error is a line on stderr, in text
					escaped = escapedJSON
				}
				for _, w := range c.want {
					if strings.Contains(w, "%s") {
						w = fmt.Sprintf(w, escaped)
					}
					if !strings.Contains(out, w) && !strings.Contains(errs, w) {
						t.Errorf("the output lacks %q\nstdout:\n%.2000s\nstderr:\n%.2000s", w, out, errs)
					}
				}
			})
		}
	}
}

// broken.Escapes as the text report and error line show it
// (termsafe.String), and as the JSON report does (encoding/json escapes
// the C0 controls, termsafe.JSON the C1 one).
const (
	escapedText = `\x1b]0;owned\x07\x1b[2J\x1b[31mred\u009b0m\x0d\x08\x07`
	escapedJSON = `\u001b]0;owned\u0007\u001b[2J\u001b[31mred\u009b0m\r\b\u0007`
)

// rawControl returns the byte offset and the first control character of
// s a terminal would act on (C0 but LF and TAB, DEL, C1, an invalid UTF-8
// byte), or -1.
func rawControl(s string) (int, rune) {
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			return i, r
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return i, r
		}
	}
	return -1, 0
}
