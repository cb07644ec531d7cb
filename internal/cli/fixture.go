package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/spf13/cobra"
)

func newFixtureCmd(o *globalOpts) *cobra.Command {
	c := &cobra.Command{
		Use:   "fixture",
		Short: "Create and check recorded-exchange fixtures",
		Long: `Work with fixture files: one recorded exchange per file, in the text format
of docs/fixtures.md. Fixtures are redacted when they are created:
credential headers, API-key query parameters and well-known key prefixes
in bodies are replaced by markers such as [REDACTED:authorization].`,
		Example: "  abctl fixture import --sse body.sse --out chat.fixture\n  abctl fixture import --har session.har --out fixtures/web\n  abctl fixture check fixtures/inference/*.fixture",
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = groupRunE
	c.AddCommand(newFixtureImportCmd(o), newFixtureCheckCmd(o))
	return c
}

func newFixtureImportCmd(o *globalOpts) *cobra.Command {
	var sse, jsonBody, har, request, out, direction string
	var status int
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
			format, err := o.format()
			if err != nil {
				return err
			}
			if direction != "" && direction != "inbound" && direction != "outbound" {
				return usageErr(fmt.Errorf("--direction %q: want inbound or outbound", direction))
			}
			if har != "" {
				if sse != "" || jsonBody != "" || request != "" {
					return usageErr(errors.New("--har goes alone: not with --sse, --json or --request"))
				}
				return importHAR(o, format, har, out, direction)
			}
			f, err := loadExchange(nil, sse, jsonBody, request, "--json or --har")
			if err != nil {
				return err
			}
			fixture.Redact(f)
			f.Direction = direction
			if status != 0 {
				if status < 100 || status > 999 {
					return usageErr(fmt.Errorf("--status %d: want 100-999", status))
				}
				f.Response.Status = status
			}
			if jsonBody != "" {
				if err := fixture.EmptyBodyStatus(f); err != nil {
					return usageErr(fmt.Errorf("--json %s: %w", jsonBody, err))
				}
			}
			if out == "" {
				in := sse + jsonBody
				out = strings.TrimSuffix(filepath.Base(in), filepath.Ext(in)) + fixture.Ext
			}
			if err := fixture.WriteFile(out, f); err != nil {
				return readErr(err)
			}
			return printWritten(o, format, []string{out})
		},
	}
	fl := c.Flags()
	fl.StringVar(&sse, "sse", "", "captured text/event-stream body")
	fl.StringVar(&jsonBody, "json", "", "captured JSON response body")
	fl.StringVar(&har, "har", "", "HAR export: one fixture per entry")
	fl.StringVar(&request, "request", "", "request for --sse/--json as HTTP/1.1 text")
	fl.StringVar(&out, "out", "", "output fixture file (--sse/--json) or directory (--har)")
	fl.IntVar(&status, "status", 0, "response status for --sse/--json (default 200)")
	fl.StringVar(&direction, "direction", "", "chain direction to record in the fixture: inbound or outbound (default outbound)")
	return c
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

func newFixtureCheckCmd(o *globalOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "check FIXTURE...",
		Short: "Parse fixture files and report the first error of each",
		Long: `Parse fixture files strictly. Each error names the file, line and field. The
exit code is 3 when any file is malformed.`,
		Example: "  abctl fixture check fixtures/*/*.fixture",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr(errors.New("give at least one FIXTURE"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.format()
			if err != nil {
				return err
			}
			type result struct {
				File  string `json:"file"`
				OK    bool   `json:"ok"`
				Error string `json:"error,omitempty"`
			}
			results := []result{}
			bad := 0
			for _, a := range args {
				if _, err := fixture.ReadFile(a); err != nil {
					// The message goes to stderr in every format; json
					// and yaml also carry it in the data.
					fmt.Fprintf(o.app.Err, "%s\n", termsafe.String(err.Error()))
					results = append(results, result{File: a, Error: err.Error()})
					bad++
					continue
				}
				results = append(results, result{File: a, OK: true})
				if format == "table" {
					fmt.Fprintf(o.app.Out, "%s: ok\n", a)
				}
			}
			if format != "table" {
				if err := writeData(o.app.Out, format, struct {
					Files []result `json:"files"`
				}{results}); err != nil {
					return err
				}
			}
			if bad > 0 {
				return &ExitError{Code: ExitRead}
			}
			return nil
		},
	}
}
