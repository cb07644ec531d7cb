package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/limits"
)

// ManifestSuffix ends the name of a plugin manifest: NAME.abkit.json in a
// dir: folder (or given to --plugin-dir, conformance --plugin) starts the
// command line it names. It is how interpreted plugins are found where a
// file cannot say how to run itself (Windows has no shebang) or when a
// launcher starts other files (docs/plugins-in-other-languages.md).
const ManifestSuffix = ".abkit.json"

// Marker is the word a script names in a comment line near its top
// ("# abkit-plugin", "// abkit-plugin") to be started by a dir: source.
const Marker = "abkit-plugin"

// Cookie is abkit's go-plugin magic cookie value. Every plugin compares its
// environment with it, so a compiled plugin holds it verbatim; a dir:
// source starts a native executable only when it does.
const Cookie = "7d1f3c5e-abkit-plugin-v1-b2a94e60"

// manifestFile is the JSON form of a manifest.
type manifestFile struct {
	// Argv is the command line. argv[0] is a program looked up in PATH
	// (python3, node) or, with a path separator, a path relative to the
	// manifest's folder.
	Argv []string `json:"argv"`
	// Files are more files (globs, relative to the folder) whose change
	// means the plugin must be described again: the modules it imports.
	Files []string `json:"files,omitempty"`
}

// Command is a plugin's command line: the program, its arguments and the
// working directory it runs in ("" for the host's).
type Command struct {
	Argv []string
	Dir  string
}

// ReadManifest reads the manifest at path and resolves its command line:
// argv[0] through PATH or against the manifest's folder, which is also the
// working directory the plugin runs in. deps are the files whose size and
// modification time key its cached description: the resolved program, the
// arguments that name files in the folder, and the manifest's "files".
func ReadManifest(path string) (cmd Command, deps []string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Command{}, nil, err
	}
	b, err := limits.ReadFileMax(abs, "plugin manifest size", 1<<20, "", "")
	if err != nil {
		return Command{}, nil, err
	}
	var m manifestFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Command{}, nil, fmt.Errorf("%s: %v; want {\"argv\": [\"python3\", \"plugin.py\"], \"files\": [\"lib/*.py\"]}", path, err)
	}
	if len(m.Argv) == 0 || m.Argv[0] == "" {
		return Command{}, nil, fmt.Errorf("%s: field argv: want the plugin's command line, a non-empty list such as [\"python3\", \"plugin.py\"]", path)
	}
	dir := filepath.Dir(abs)
	prog := m.Argv[0]
	if strings.ContainsAny(prog, `/\`) {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(dir, prog)
		}
	} else if p, err := exec.LookPath(prog); err == nil {
		prog = p
	} else {
		return Command{}, nil, fmt.Errorf("%s: field argv[0]: %q is not a program in PATH (%v); install it or give its path", path, m.Argv[0], err)
	}
	if p, err := filepath.Abs(prog); err == nil {
		prog = p
	}
	deps = []string{abs, prog}
	for _, a := range m.Argv[1:] {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		f := a
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			deps = append(deps, f)
		}
	}
	for i, g := range m.Files {
		if !filepath.IsAbs(g) {
			g = filepath.Join(dir, g)
		}
		ms, err := filepath.Glob(g)
		if err != nil {
			return Command{}, nil, fmt.Errorf("%s: field files[%d]: %v", path, i, err)
		}
		deps = append(deps, ms...)
	}
	slices.Sort(deps[2:])
	return Command{Argv: append([]string{prog}, m.Argv[1:]...), Dir: dir}, slices.Compact(deps), nil
}

// fingerprint is the cache key of a manifest's plugin: the path, size and
// modification time of each of deps. A missing file counts as such.
func fingerprint(deps []string) string {
	h := sha256.New()
	for _, d := range deps {
		fmt.Fprintf(h, "%s\x00", d)
		if st, err := os.Stat(d); err == nil {
			fmt.Fprintf(h, "%d %d\x00", st.Size(), st.ModTime().UnixNano())
		} else {
			io.WriteString(h, "missing\x00")
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// recognise says whether the executable file at path is to be started as a
// plugin, and if not why. The rule (docs/catalog.md, "dir: sources"):
//   - a native executable (ELF, Mach-O, PE) that contains abkit's cookie:
//     every compiled plugin compares its environment with it;
//   - a script (#!) with a comment line naming [Marker] in its first 16
//     lines, such as "# abkit-plugin" (the SDK, not the script, holds the
//     cookie);
//   - nothing else: a helper script or program beside the plugins is
//     never run.
func recognise(path string) (ok bool, why string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, "", err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, "", err
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("#!")):
		if runtime.GOOS == "windows" {
			return false, "skipped: a script, which Windows cannot start; give it a " + ManifestSuffix + " manifest", nil
		}
		if hasMarker(head) {
			return true, "", nil
		}
		return false, "skipped: a script without an \"" + Marker + "\" comment line in its first 16 lines (not recognised as a plugin, so not started)", nil
	case native(head):
		found, err := contains(f, head, []byte(Cookie))
		if err != nil {
			return false, "", err
		}
		if found {
			return true, "", nil
		}
		return false, "skipped: an executable without abkit's handshake cookie (not an abkit plugin, so not started)", nil
	}
	return false, "skipped: neither a compiled plugin nor a script with a #! line (not started); a plugin that needs a command line takes a " + ManifestSuffix + " manifest", nil
}

// hasMarker reports a line among the first 16 that is a comment naming
// Marker: "# abkit-plugin", "// abkit-plugin", "-- abkit-plugin".
func hasMarker(head []byte) bool {
	for i, line := range strings.SplitN(string(head), "\n", 17) {
		if i == 16 {
			break
		}
		l := strings.TrimSpace(line)
		for _, lead := range []string{"#", "//", "--", ";", "rem "} {
			if rest, ok := strings.CutPrefix(l, lead); ok {
				rest = strings.TrimSpace(rest)
				if rest == Marker || strings.HasPrefix(rest, Marker+" ") || strings.HasPrefix(rest, Marker+":") {
					return true
				}
			}
		}
	}
	return false
}

// native reports the magic of an ELF, Mach-O or PE executable.
func native(head []byte) bool {
	for _, m := range [][]byte{{0x7f, 'E', 'L', 'F'}, {0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf}, {0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe}, {0xca, 0xfe, 0xba, 0xbe}, {'M', 'Z'}} {
		if bytes.HasPrefix(head, m) {
			return true
		}
	}
	return false
}

// contains reports whether needle occurs in head followed by the rest of r,
// reading in blocks that overlap by len(needle)-1 bytes.
func contains(r io.Reader, head, needle []byte) (bool, error) {
	if bytes.Contains(head, needle) {
		return true, nil
	}
	buf := make([]byte, 1<<20)
	keep := len(needle) - 1
	carry := append([]byte(nil), head[max(0, len(head)-keep):]...)
	for {
		copy(buf, carry)
		n, err := r.Read(buf[len(carry):])
		if n > 0 {
			if bytes.Contains(buf[:len(carry)+n], needle) {
				return true, nil
			}
			end := len(carry) + n
			carry = append(carry[:0], buf[max(0, end-keep):end]...)
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
