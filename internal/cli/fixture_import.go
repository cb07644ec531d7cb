package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/spf13/cobra"
)

// fixtureImportOpts are what `abctl fixture import` runs with.
type fixtureImportOpts struct {
	sse, jsonBody, har, request, out, direction string
	status                                      int
}

func newFixtureImportCmd(o *globalOpts) *cobra.Command {
	im := &fixtureImportOpts{}
	c := &cobra.Command{
		Use:   "import (--sse BODY | --json BODY [--request REQ] | --har FILE) [--out PATH]",
		Short: "Make fixtures from a captured body or a HAR export",
		Long: `Make fixtures from captured traffic, redacted:

  --sse BODY    a text/event-stream body, such as 'curl -N' output; one chunk
                per event, all at offset 0 (a capture has no timing)
  --json BODY   a JSON response body
  --request REQ the request that produced the body, as HTTP/1.1 text:
                "METHOD URL [HTTP/1.1]", header lines, a blank line, the body
                (default: POST http://upstream.invalid/)
  --har FILE    a browser or proxy HAR export: one fixture per entry

--out is the fixture file for --sse/--json (default: BODY with the
extension .fixture) and the directory for --har (default: the current
directory; files are NNN-METHOD-PATH.fixture). Every input is checked
before anything is written, and each file is written atomically, so a bad
input leaves nothing behind. Bodies over 32 MiB are refused, and so is an
--sse body that is not UTF-8 text or holds control bytes other than TAB,
CR and LF (the error gives the byte offset); --har keeps binary bodies.`,
		Example: "  curl -sN https://api.example.com/v1/chat/completions ... > body.sse\n  abctl fixture import --sse body.sse --request req.http --out chat.fixture",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFixtureImport(cmd.Context(), o, im)
		},
	}
	fl := c.Flags()
	fl.StringVar(&im.sse, "sse", "", "captured text/event-stream body")
	fl.StringVar(&im.jsonBody, "json", "", "captured JSON response body")
	fl.StringVar(&im.har, "har", "", "HAR export: one fixture per entry")
	fl.StringVar(&im.request, "request", "", "request for --sse/--json as HTTP/1.1 text")
	fl.StringVar(&im.out, "out", "", "output fixture file (--sse/--json) or directory (--har)")
	fl.IntVar(&im.status, "status", 0, "response status for --sse/--json (default 200)")
	fl.StringVar(&im.direction, "direction", "", "chain direction to record in the fixture: inbound or outbound (default outbound)")
	return c
}

func runFixtureImport(_ context.Context, o *globalOpts, im *fixtureImportOpts) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	if im.direction != "" && im.direction != "inbound" && im.direction != "outbound" {
		return usageErr(fmt.Errorf("--direction %q: want inbound or outbound", im.direction))
	}
	if im.har != "" {
		if im.sse != "" || im.jsonBody != "" || im.request != "" {
			return usageErr(errors.New("--har goes alone: not with --sse, --json or --request"))
		}
		return importHAR(o, format, im.har, im.out, im.direction)
	}
	f, err := loadExchange(nil, im.sse, im.jsonBody, im.request, "--json or --har")
	if err != nil {
		return err
	}
	fixture.Redact(f)
	f.Direction = im.direction
	if im.status != 0 {
		if im.status < 100 || im.status > 999 {
			return usageErr(fmt.Errorf("--status %d: want 100-999", im.status))
		}
		f.Response.Status = im.status
	}
	if im.jsonBody != "" {
		if err := fixture.EmptyBodyStatus(f); err != nil {
			return usageErr(fmt.Errorf("--json %s: %w", im.jsonBody, err))
		}
	}
	out := im.out
	if out == "" {
		in := im.sse + im.jsonBody
		out = strings.TrimSuffix(filepath.Base(in), filepath.Ext(in)) + fixture.Ext
	}
	if err := fixture.WriteFile(out, f); err != nil {
		return readErr(err)
	}
	return printWritten(o, format, []string{out})
}

// printWritten prints the fixture files written: one per line, or in
// json|yaml as {"written": [...]}.
func printWritten(o *globalOpts, format string, paths []string) error {
	if format != "table" {
		return writeData(o.app.Out, format, struct {
			Written []string `json:"written"`
		}{paths})
	}
	for _, p := range paths {
		fmt.Fprintln(o.app.Out, p)
	}
	return nil
}

func importHAR(o *globalOpts, format, har, out, direction string) error {
	data, err := fixture.ReadHAR(har)
	if err != nil {
		return readErr(err)
	}
	fs, warns, err := fixture.ImportHAR(har, data)
	for _, w := range warns {
		fmt.Fprintln(o.app.Err, "warning:", w)
	}
	if err != nil {
		return readErr(err)
	}
	if out == "" {
		out = "."
	}
	// Encode and name all first, so that a bad entry writes nothing. Names
	// are built of sanitised parts only (fixture.NamePart), so no method
	// or URL can point a file outside --out.
	type file struct {
		name string
		data []byte
	}
	var files []file
	for i, f := range fs {
		f.Direction = direction
		b, err := fixture.Marshal(f)
		if err != nil {
			return readErr(fmt.Errorf("%s: log.entries[%d]: %w", har, i, err))
		}
		files = append(files, file{harName(i, f), b})
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return readErr(err)
	}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(out, f.name)); err == nil {
			return readErr(fmt.Errorf("%s already exists: nothing written; import into an empty --out directory or remove the earlier import", filepath.Join(out, f.name)))
		}
	}
	written := []string{}
	for _, f := range files {
		// CreateNew never replaces a file, so an import racing another
		// writer into the same directory fails rather than losing data.
		if err := fixture.CreateNew(out, f.name, f.data); err != nil {
			for _, w := range written {
				os.Remove(w)
			}
			return readErr(fmt.Errorf("%w; nothing written", err))
		}
		written = append(written, filepath.Join(out, f.name))
	}
	return printWritten(o, format, written)
}

// harName is NNN-METHOD-PATH.fixture, each part sanitised.
func harName(i int, f *fixture.Fixture) string {
	path := f.Request.URL
	if j := strings.Index(path, "://"); j >= 0 {
		path = path[j+3:]
	}
	if j := strings.IndexAny(path, "?#"); j >= 0 {
		path = path[:j]
	}
	if j := strings.Index(path, "/"); j >= 0 {
		path = path[j+1:]
	} else {
		path = ""
	}
	return fmt.Sprintf("%03d-%s-%s%s", i+1, strings.ToLower(fixture.NamePart(f.Request.Method, "request")), fixture.NamePart(path, "root"), fixture.Ext)
}
