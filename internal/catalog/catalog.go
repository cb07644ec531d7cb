package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/abkit/abkit/internal/redact"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Catalog is a set of plugin descriptors from one or more sources, sorted by
// name. Two descriptors may share a name when two sources both provide it;
// [Lint] reports that (P1) and [Catalog.Lookup] returns the first.
type Catalog struct {
	// Plugins is sorted by name, then by the order of the sources.
	Plugins []Descriptor
	// Notes are things the sources skipped, such as files in a plugin
	// directory that are not plugins. They are not errors.
	Notes []Note
	// Sources are the specs the catalog was loaded from, in order.
	Sources []string
}

// Note is something a source skipped or wants the operator to know.
type Note struct {
	Source string `json:"source"`
	Path   string `json:"path,omitempty"`
	Msg    string `json:"msg"`
}

func (n Note) String() string {
	if n.Path != "" {
		return fmt.Sprintf("%s: %s: %s", n.Source, n.Path, n.Msg)
	}
	return n.Source + ": " + n.Msg
}

// Lookup returns the first descriptor named name.
func (c *Catalog) Lookup(name string) (*Descriptor, bool) {
	i, ok := slices.BinarySearchFunc(c.Plugins, name, func(d Descriptor, n string) int { return strings.Compare(d.Name, n) })
	if !ok {
		return nil, false
	}
	return &c.Plugins[i], true
}

// Names returns the distinct plugin names, sorted.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.Plugins))
	for _, d := range c.Plugins {
		if len(names) == 0 || names[len(names)-1] != d.Name {
			names = append(names, d.Name)
		}
	}
	return names
}

// Dependents returns the names of plugins that name name in requires or
// requires_any, sorted.
func (c *Catalog) Dependents(name string) []string {
	var out []string
	for _, d := range c.Plugins {
		if d.Capabilities == nil {
			continue
		}
		if slices.Contains(d.Capabilities.Requires, name) || slices.Contains(d.Capabilities.RequiresAny, name) {
			out = append(out, d.Name)
		}
	}
	return slices.Compact(out)
}

// Source is somewhere descriptors come from.
type Source interface {
	// Spec is the source as the operator wrote it, such as "dir:./bin".
	Spec() string
	// Load returns the source's descriptors and notes. An error means the
	// source could not be read at all; it is a [*ReadError].
	Load(ctx context.Context) ([]Descriptor, []Note, error)
}

// ReadError reports that a source, plugin, file or gateway could not be
// read. abctl maps it to exit code 3.
type ReadError struct {
	// Source is the source spec, such as "url:http://gw/plugins".
	Source string
	Err    error
}

// Error names the source once: "file:c.yaml: no such file or directory",
// not "file:c.yaml: open c.yaml: no such file or directory", and a
// positioned error as "file:c.yaml:3:5: …".
func (e *ReadError) Error() string {
	msg := e.Err.Error()
	path := e.Source
	if i := strings.Index(path, ":"); i > 0 && (path[:i] == "file" || path[:i] == "dir") {
		path = path[i+1:]
	}
	var pe *fs.PathError
	if errors.As(e.Err, &pe) && pe.Path == path && msg == pe.Error() {
		msg = pe.Err.Error()
	}
	switch {
	case strings.HasPrefix(msg, e.Source+":"):
		// A positioned error already starts with the file, as "FILE:3:5: …".
		return redact.String(msg)
	case path != e.Source && strings.HasPrefix(msg, path+":"):
		return redact.String(strings.TrimSuffix(e.Source, path) + msg)
	}
	return redact.String(e.Source + ": " + msg)
}
func (e *ReadError) Unwrap() error { return e.Err }

func readErr(source string, format string, args ...any) *ReadError {
	return &ReadError{Source: source, Err: fmt.Errorf(format, args...)}
}

// Defaults for the url: and dir: sources.
const (
	DefaultURLTimeout   = 10 * time.Second
	DefaultDescribeTime = 5 * time.Second
)

// Options configure how sources are built. The zero value works: builtin
// plugins from [Options.Builtin], no describer (dir: sources fail with a
// clear error), default limits.
type Options struct {
	// Builtin lists the compiled-in plugins for the builtin source.
	Builtin func() []Builtin
	// Describer describes plugin binaries for dir: sources.
	Describer Describer
	// CacheDir holds cached binary descriptions. Empty means
	// os.UserCacheDir()/abkit/describe; "-" disables the cache.
	CacheDir string
	// DescribeTimeout bounds describing one binary; zero means 5 s.
	DescribeTimeout time.Duration
	// DescribeWorkers bounds parallel descriptions; zero means 8.
	DescribeWorkers int
	// HTTPClient is used by url: sources; nil means a plain client.
	HTTPClient *http.Client
	// URLTimeout bounds a url: fetch; zero means 10 s.
	URLTimeout time.Duration
	// URLMaxBytes bounds a url: response body; zero means limits.URLBody (4 MiB, or
	// $ABKIT_MAX_URL_BODY).
	URLMaxBytes int64
}

// ParseSource builds the source spec names: "builtin", "dir:PATH",
// "file:PATH" or "url:URL".
func ParseSource(spec string, opts Options) (Source, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	switch {
	case spec == "builtin":
		return &builtinSource{list: opts.Builtin}, nil
	case kind == "dir" && arg != "":
		return newDirSource(spec, arg, opts), nil
	case kind == "file" && arg != "":
		return &fileSource{spec: spec, path: arg}, nil
	case kind == "url" && arg != "":
		return newURLSource(spec, arg, opts)
	}
	return nil, fmt.Errorf("source %q: want builtin, dir:PATH, file:PATH or url:URL", redact.URL(spec))
}

// ErrBadSource marks a source spec that does not parse; abctl maps it to a
// usage error.
var ErrBadSource = errors.New("bad source")

// Load reads every source in order and combines them into one catalog,
// sorted by name. It stops at the first source that cannot be read.
func Load(ctx context.Context, specs []string, opts Options) (*Catalog, error) {
	srcs := make([]Source, 0, len(specs))
	for _, s := range specs {
		src, err := ParseSource(s, opts)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSource, err)
		}
		srcs = append(srcs, src)
	}
	return LoadSources(ctx, srcs...)
}

// checkName refuses a plugin name no chain entry can name: one with a
// NUL byte or invalid UTF-8 (a url: or file: source could serve one).
// Other control characters are shown escaped (termsafe), as in
// descriptions.
func checkName(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("plugin name %q is not valid UTF-8; a name is text a chain entry repeats", name)
	}
	if i := strings.IndexByte(name, 0); i >= 0 {
		return fmt.Errorf("plugin name %q holds a NUL byte at byte %d; a name is text a chain entry repeats", name, i)
	}
	return nil
}

// LoadSources combines already built sources into one catalog.
func LoadSources(ctx context.Context, srcs ...Source) (*Catalog, error) {
	c := &Catalog{}
	for _, src := range srcs {
		ds, notes, err := src.Load(ctx)
		if err != nil {
			var re *ReadError
			if !errors.As(err, &re) {
				err = &ReadError{Source: src.Spec(), Err: err}
			}
			return nil, err
		}
		for i := range ds {
			if err := checkName(ds[i].Name); err != nil {
				return nil, &ReadError{Source: src.Spec(), Err: err}
			}
			d := ds[i].clone()
			if d.Origin.Source == "" {
				d.Origin.Source = src.Spec()
			}
			d.finish()
			c.Plugins = append(c.Plugins, d)
		}
		c.Notes = append(c.Notes, notes...)
		c.Sources = append(c.Sources, src.Spec())
	}
	// Stable: duplicates keep source order, so Lookup finds the first.
	slices.SortStableFunc(c.Plugins, func(a, b Descriptor) int { return cmp.Compare(a.Name, b.Name) })
	return c, nil
}
