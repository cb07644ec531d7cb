package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/probe"
)

// Describer describes one plugin binary: it starts it, completes the
// plugin handshake and asks what it serves. The go-plugin host provides the
// real one; tests use fakes.
//
// Describe returns an error wrapping [ErrNotPlugin] when path is not an
// abkit plugin (it does not answer the handshake). ctx carries the time
// bound; a describer must stop the process when ctx is done.
type Describer interface {
	Describe(ctx context.Context, path string) ([]Descriptor, error)
}

// ErrNotPlugin marks a file that is not a plugin; dir: sources skip it with
// a note.
var ErrNotPlugin = errors.New("not an abkit plugin")

type dirSource struct {
	spec, dir string
	describer Describer
	cache     *describeCache
	timeout   time.Duration
	workers   int
}

func newDirSource(spec, dir string, opts Options) *dirSource {
	s := &dirSource{spec: spec, dir: dir, describer: opts.Describer, timeout: opts.DescribeTimeout, workers: opts.DescribeWorkers}
	if s.timeout <= 0 {
		s.timeout = DefaultDescribeTime
	}
	if s.workers <= 0 {
		s.workers = min(8, 2*runtime.GOMAXPROCS(0))
	}
	if opts.CacheDir != "-" {
		s.cache = &describeCache{dir: opts.CacheDir}
	}
	return s
}

func (s *dirSource) Spec() string { return s.spec }

// dirResult is what describing one file produced.
type dirResult struct {
	descs []Descriptor
	note  string
	err   error
}

func (s *dirSource) Load(ctx context.Context) ([]Descriptor, []Note, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, nil, &ReadError{Source: s.spec, Err: err}
	}
	var files []string
	var notes []Note
	// A manifest's plugin is listed once, through its manifest: the files
	// its command line names are not started on their own.
	named := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ManifestSuffix) {
			p := filepath.Join(s.dir, e.Name())
			if cmd, _, err := ReadManifest(p); err == nil {
				for _, a := range cmd.Argv {
					named[filepath.Clean(a)] = true
					named[filepath.Join(s.dir, a)] = true
				}
			}
		}
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join(s.dir, e.Name())
		info, err := os.Stat(p) // follows symlinks
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if strings.HasSuffix(e.Name(), ManifestSuffix) {
			files = append(files, p)
			continue
		}
		abs, _ := filepath.Abs(p)
		if named[p] || named[abs] {
			continue
		}
		if !executable(info) {
			notes = append(notes, Note{Source: s.spec, Path: p, Msg: "skipped: not executable"})
			continue
		}
		files = append(files, p)
	}
	if len(files) > 0 && s.describer == nil {
		return nil, nil, readErr(s.spec, "describing plugin binaries needs the plugin host, which this build of abctl does not have yet")
	}
	results := make([]dirResult, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(s.workers, len(files)) {
		wg.Go(func() {
			for i := range work {
				results[i] = s.describeOne(ctx, files[i])
			}
		})
	}
	for i := range files {
		work <- i
	}
	close(work)
	wg.Wait()

	var out []Descriptor
	for i, r := range results {
		switch {
		case r.err != nil:
			return nil, nil, &ReadError{Source: s.spec, Err: fmt.Errorf("%s: %w", files[i], r.err)}
		case r.note != "":
			notes = append(notes, Note{Source: s.spec, Path: files[i], Msg: r.note})
		}
		out = append(out, r.descs...)
	}
	return out, notes, nil
}

func executable(info fs.FileInfo) bool {
	if runtime.GOOS == "windows" {
		return filepath.Ext(info.Name()) == ".exe"
	}
	return info.Mode().Perm()&0o111 != 0
}

// describeOne describes one binary, from the cache when its path, size and
// modification time match a cached entry (for a manifest: those of every
// file it names, too). A file that is not recognised as a plugin is not
// started; that verdict is cached like a description.
func (s *dirSource) describeOne(ctx context.Context, path string) dirResult {
	abs, err := filepath.Abs(path)
	if err != nil {
		return dirResult{err: err}
	}
	info, err := os.Stat(abs)
	if err != nil {
		return dirResult{err: err}
	}
	var cmd *Command
	deps := ""
	if strings.HasSuffix(abs, ManifestSuffix) {
		c, files, err := ReadManifest(abs)
		if err != nil {
			return dirResult{err: err}
		}
		cmd, deps = &c, fingerprint(files)
	}
	if e, ok := s.cache.get(abs, info); ok && e.Deps == deps {
		return e.result(s.spec)
	}
	e := cacheEntry{Path: abs, Size: info.Size(), ModTime: info.ModTime().UnixNano(), Deps: deps}
	if cmd == nil {
		ok, why, err := recognise(abs)
		if err != nil {
			return dirResult{err: err}
		}
		if !ok {
			e.NotPlugin = strings.TrimPrefix(why, "skipped: ")
			s.cache.put(e)
			return e.result(s.spec)
		}
	}
	// Hash while the binary starts: starting and the handshake are mostly
	// waiting, and hashing a 20 MB binary is most of a cold description's
	// CPU time.
	type hashed struct {
		sum string
		err error
	}
	hc := make(chan hashed, 1)
	go func() {
		sum, err := hashFile(abs)
		hc <- hashed{sum, err}
	}()
	dctx, cancel := context.WithTimeout(ctx, s.timeout)
	var descs []Descriptor
	if cmd != nil {
		cd, ok := s.describer.(CommandDescriber)
		if !ok {
			cancel()
			<-hc
			return dirResult{err: errors.New("this describer cannot start a manifest's command line")}
		}
		descs, err = cd.DescribeCommand(dctx, *cmd)
	} else {
		descs, err = s.describer.Describe(dctx, abs)
	}
	// A timeout, the source's own or the describer's (go-plugin's start
	// timeout), is not an answer: a binary that was slow once (a cold
	// disk, a busy machine) may well be a plugin.
	timedOut := errors.Is(dctx.Err(), context.DeadlineExceeded) || (err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil)
	cancel()
	h := <-hc
	if h.err != nil {
		return dirResult{err: h.err}
	}
	e.SHA256 = h.sum
	if cmd != nil {
		e.Argv, e.Dir = cmd.Argv, cmd.Dir
	}
	// Only definite answers are cached: a description, or "not a plugin"
	// from a binary that answered (or exited) in time.
	switch {
	case timedOut:
		return dirResult{note: fmt.Sprintf("skipped: no handshake within %s (not a plugin, or too slow to start); not cached, so the next load tries again", s.timeout)}
	case errors.Is(err, ErrNotPlugin):
		e.NotPlugin = err.Error()
	case err != nil:
		if ctx.Err() != nil {
			return dirResult{err: ctx.Err()}
		}
		return dirResult{err: fmt.Errorf("describe: %w", err)}
	default:
		for _, d := range descs {
			e.Plugins = append(e.Plugins, cachedDescriptor{Descriptor: d, Observed: d.Observed})
		}
	}
	s.cache.put(e)
	return e.result(s.spec)
}

// CommandDescriber is a Describer that can also start a command line (a
// manifest's plugin). The go-plugin host's describer is one.
type CommandDescriber interface {
	DescribeCommand(ctx context.Context, cmd Command) ([]Descriptor, error)
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cacheEntry is one cached description, keyed by the binary's absolute path
// and valid while its size and modification time are unchanged.
type cacheEntry struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	SHA256  string `json:"sha256"`
	// Deps is a manifest's fingerprint: the size and modification time of
	// every file it names (ReadManifest), so that an edit to the script it
	// starts is seen without --no-cache. Empty for a binary.
	Deps string `json:"deps,omitempty"`
	// Argv and Dir are a manifest's resolved command line.
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	// NotPlugin is the reason the file is not a plugin, if it is not.
	NotPlugin string             `json:"not_plugin,omitempty"`
	Plugins   []cachedDescriptor `json:"plugins,omitempty"`
}

// cachedDescriptor keeps the P2 observations, which the descriptor's JSON
// form leaves out.
type cachedDescriptor struct {
	Descriptor Descriptor       `json:"descriptor"`
	Observed   []probe.Observed `json:"observed,omitempty"`
}

func (e cacheEntry) result(spec string) dirResult {
	if e.NotPlugin != "" {
		return dirResult{note: "skipped: " + e.NotPlugin}
	}
	var r dirResult
	for _, c := range e.Plugins {
		d := c.Descriptor
		d.Observed = c.Observed
		d.Origin = Origin{Kind: OriginBinary, Source: spec, Path: e.Path, SHA256: e.SHA256, Argv: e.Argv, Dir: e.Dir}
		r.descs = append(r.descs, d)
	}
	return r
}

// describeCache stores one JSON file per binary. A nil cache never hits and
// stores nothing. Write failures are ignored: the cache only saves time.
type describeCache struct {
	dir  string
	once sync.Once
	root string
}

// cacheVersion is part of every file name, so a format change starts over.
// v2: dir: starts only recognised plugins, and manifests key on their
// files; a v1 entry may describe a script that is no longer started.
const cacheVersion = "v2"

func (c *describeCache) file(path string) string {
	c.once.Do(func() {
		c.root = c.dir
		if c.root == "" {
			if d, err := os.UserCacheDir(); err == nil {
				c.root = filepath.Join(d, "abkit", "describe")
			}
		}
	})
	if c.root == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(c.root, cacheVersion+"-"+hex.EncodeToString(sum[:16])+".json")
}

func (c *describeCache) get(path string, info fs.FileInfo) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	f := c.file(path)
	if f == "" {
		return cacheEntry{}, false
	}
	b, err := limits.ReadFileMax(f, "describe cache entry size", 16<<20, "", "")
	if err != nil {
		return cacheEntry{}, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Path != path || e.Size != info.Size() || e.ModTime != info.ModTime().UnixNano() {
		return cacheEntry{}, false
	}
	if e.NotPlugin != "" && strings.Contains(e.NotPlugin, "timeout") {
		// Written by an abctl that cached timeouts: not a definite
		// answer, so describe the binary again.
		return cacheEntry{}, false
	}
	return e, true
}

// CacheDir returns the directory dir: sources cache binary descriptions in
// for opts: opts.CacheDir, or os.UserCacheDir()/abkit/describe. It is ""
// when the cache is off ("-") or there is no user cache directory.
func CacheDir(opts Options) string {
	if opts.CacheDir == "-" {
		return ""
	}
	c := &describeCache{dir: opts.CacheDir}
	c.file("")
	return c.root
}

// CleanCache removes every cached binary description (and any temporary
// file of an interrupted write) from the cache directory of opts and
// returns the directory and how many descriptions it removed. A missing
// directory is an empty cache. Other files are left alone.
func CleanCache(opts Options) (dir string, removed int, err error) {
	dir = CacheDir(opts)
	if dir == "" {
		return "", 0, nil
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return dir, 0, nil
	}
	if err != nil {
		return dir, 0, err
	}
	for _, e := range ents {
		n := e.Name()
		desc := strings.HasPrefix(n, "v") && strings.Contains(n, "-") && strings.HasSuffix(n, ".json")
		if e.IsDir() || !(desc || strings.HasPrefix(n, ".describe-")) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return dir, removed, err
		}
		if desc {
			removed++
		}
	}
	return dir, removed, nil
}

func (c *describeCache) put(e cacheEntry) {
	if c == nil {
		return
	}
	f := c.file(e.Path)
	if f == "" {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(f), 0o755) != nil {
		return
	}
	// Write then rename, so a concurrent reader never sees half a file.
	tmp, err := os.CreateTemp(filepath.Dir(f), ".describe-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), f) != nil {
		os.Remove(tmp.Name())
	}
}
