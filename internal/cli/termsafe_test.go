package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Names and descriptions from a file: (or url:, dir:) source reach the
// terminal escaped in tables, details, notes and errors: a catalog cannot
// set the window title, clear the screen or hide text.
func TestCatalogTextEscapedOnTerminal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(p, []byte("plugins:\n  - name: \"evil\\e[2J\"\n    description: \"\\e]0;PWNED\\a\\e[8mhidden\\u009b31m\"\n"), 0o644)
	for _, args := range [][]string{
		{"catalog", "list", "--source", "file:" + p},
		{"catalog", "show", "--source", "file:" + p, "evil\x1b[2J"},
		{"catalog", "list", "--source", "file:" + p, "--no-color"},
	} {
		for _, terminal := range []bool{true, false} {
			r := run(t, terminal, nil, args...)
			all := r.out + r.err
			for _, raw := range []string{"\x1b]0;", "\x1b[2J", "\x1b[8m", "\u009b", "\a"} {
				if strings.Contains(all, raw) {
					t.Errorf("%v (terminal %t): output holds the raw sequence %q:\n%q", args, terminal, raw, all)
				}
			}
			if !strings.Contains(all, `\x1b]0;PWNED\x07`) && r.code == 0 {
				t.Errorf("%v: escaped description not shown: %q", args, all)
			}
		}
	}
	// -o yaml and -o json too (the YAML library wrote them raw), with the
	// data unchanged: the escapes decode to the same bytes.
	for _, format := range []string{"yaml", "json"} {
		r := run(t, true, nil, "catalog", "list", "--source", "file:"+p, "-o", format)
		for _, raw := range []string{"\x1b", "\u009b", "\a"} {
			if strings.Contains(r.out, raw) {
				t.Errorf("-o %s holds the raw byte %q:\n%q", format, raw, r.out)
			}
		}
		if !strings.Contains(r.out, `\u001b]0;PWNED\u0007\u001b[8mhidden\u009b31m`) {
			t.Errorf("-o %s: description not escaped as YAML/JSON: %q", format, r.out)
		}
	}
	// An error quoting a hostile name is escaped too.
	r := run(t, true, nil, "catalog", "show", "--source", "file:"+p, "nope\x1b]0;X\a")
	if strings.Contains(r.err, "\x1b]0;X") || strings.Contains(r.err, "evil\x1b[2J") {
		t.Errorf("error not escaped: %q", r.err)
	}
}

// A catalog name with a NUL byte is refused (exit 3) naming the source
// and the byte; invalid UTF-8 never reaches the output raw (the decoders
// read it as U+FFFD).
func TestCatalogNameNULOrInvalidUTF8(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(p, []byte("plugins:\n  - name: \"a\\0b\"\n    description: d\n"), 0o644)
	r := run(t, false, nil, "catalog", "list", "--source", "file:"+p)
	if r.code != ExitRead || !strings.Contains(r.err, `plugin name "a\x00b" holds a NUL byte`) || !strings.Contains(r.err, "file:"+p) {
		t.Errorf("NUL: exit %d, stderr %q", r.code, r.err)
	}
	os.WriteFile(p, []byte("plugins:\n  - name: a\xffb\n    description: d\n"), 0o644)
	for _, format := range []string{"table", "json", "yaml"} {
		r = run(t, false, nil, "catalog", "list", "--source", "file:"+p, "-o", format)
		if strings.Contains(r.out+r.err, "\xff") {
			t.Errorf("-o %s: a raw invalid byte reached the output: %q", format, r.out+r.err)
		}
	}
}
