package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/abkit/abkit/examples/plugins/auditlog"
	"github.com/abkit/abkit/examples/plugins/guardrail"
	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/examples/plugins/ratelimiter"
	"github.com/abkit/abkit/examples/plugins/toolallowlist"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// PipelineFactories returns the in-process pipeline plugins dryrun and
// replay can run: the builtin catalog's plus the other example plugins.
func PipelineFactories() []gateway.Factory {
	var out []gateway.Factory
	seen := map[string]bool{}
	add := func(f gateway.Factory) {
		if !seen[f.Name] {
			seen[f.Name] = true
			out = append(out, f)
		}
	}
	for _, b := range Builtins() {
		if b.Pipeline != nil {
			add(*b.Pipeline)
		}
	}
	for _, f := range []gateway.Factory{guardrail.Factory(), piiredactor.Factory(), toolallowlist.Factory(), ratelimiter.Factory(), auditlog.Factory()} {
		add(f)
	}
	return out
}

// readErr marks a file abctl could not read or decode (exit 3).
func readErr(err error) error { return &ExitError{Code: ExitRead, Err: err} }

// dryrunOpts are what `abctl dryrun` runs with: the flags and the FIXTURE
// argument, if any.
type dryrunOpts struct {
	chain, sse, json, request, direction string
	plugins                              pluginDirOpts
	args                                 []string
}

func newDryrunCmd(o *globalOpts) *cobra.Command {
	d := &dryrunOpts{}
	c := &cobra.Command{
		Use:   "dryrun --chain CHAIN.yaml (FIXTURE | --sse BODY | --json BODY)",
		Short: "Run one recorded exchange through a chain and print the trace",
		Long: `Run one exchange through a chain on the reference runtime, without any
network, and print the trace: one event per hook call, the outcome and the
warnings (such as an unterminated final SSE event). The exchange is a
fixture file (docs/fixtures.md) or a captured body: --sse for a
text/event-stream body such as 'curl -N' output, --json for a JSON body,
optionally with --request for the request that produced it.

Built-in plugins run in-process. With --plugin-dir DIR, a chain entry
that is not built in runs from the binary DIR/NAME (DIR/NAME.exe on
Windows) through go-plugin; the binary must describe itself as NAME. A
binary named as a built-in plugin is not started (a note says so) unless
--prefer-dir is given, which runs it instead; an entry's source: (builtin
or dir, docs/chains.md) decides for that entry. The plugin processes are
stopped when the run ends, fails or is interrupted.
-o json prints the report documented in
docs/replay.md (events with seq, hook, plugin, frame, last, action, reason,
status, mutated, duration_ns; outcome; warnings). The exit code is 0 when
the exchange ran, whatever the chain decided; 3 when a file or plugin
binary cannot be read; 2 for usage errors (among them a --direction the
chain has no entries for); 130 when interrupted by SIGINT, 143 by SIGTERM
(a second signal stops at once).`,
		Example: "  abctl dryrun --chain fixtures/inference/chain.yaml fixtures/inference/chat-stream.fixture\n" +
			"  abctl dryrun --chain chain.yaml --sse body.sse -o json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr(fmt.Errorf("want at most one FIXTURE, got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			d.args = args
			return runDryrun(cmd.Context(), o, d)
		},
	}
	f := c.Flags()
	f.StringVar(&d.chain, "chain", "", "chain file (docs/chains.md); required")
	f.StringVar(&d.sse, "sse", "", "captured text/event-stream body to run instead of a fixture")
	f.StringVar(&d.json, "json", "", "captured JSON body to run instead of a fixture")
	f.StringVar(&d.request, "request", "", "request for --sse/--json: HTTP/1.1 text (METHOD URL, headers, blank line, body)")
	f.StringVar(&d.direction, "direction", "", "chain direction: inbound or outbound (default: the fixture's, else outbound)")
	d.plugins.flags(f)
	_ = c.RegisterFlagCompletionFunc("chain", completeYAML)
	_ = c.RegisterFlagCompletionFunc("direction", cobra.FixedCompletions([]cobra.Completion{"inbound", "outbound"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// loadExchange reads the exchange a command names: a fixture file or a
// captured --sse / --json body with an optional --request. A captured body
// is not redacted here: a dry-run hands the chain what was captured (only
// its printed output is redacted); fixture import redacts before writing. otherBodies
// completes "use ... for other bodies" when an --sse body is not text, as
// the command's own flags allow.
func loadExchange(args []string, sse, jsonBody, request, otherBodies string) (*fixture.Fixture, error) {
	n := len(args)
	if sse != "" {
		n++
	}
	if jsonBody != "" {
		n++
	}
	if n != 1 {
		return nil, usageErr(errors.New("give exactly one of FIXTURE, --sse BODY or --json BODY"))
	}
	if len(args) == 1 {
		if request != "" {
			return nil, usageErr(errors.New("--request goes with --sse or --json, not a fixture"))
		}
		f, err := fixture.ReadFile(args[0])
		if err != nil {
			return nil, readErr(err)
		}
		return f, nil
	}
	var req *fixture.Request
	if request != "" {
		data, err := fixture.ReadBody(request)
		if err != nil {
			return nil, readErr(err)
		}
		r, err := fixture.ParseRequest(request, data)
		if err != nil {
			return nil, readErr(err)
		}
		req = &r
	}
	path, from := sse, fixture.NewSSE
	if jsonBody != "" {
		path, from = jsonBody, fixture.NewJSON
	}
	body, err := fixture.ReadBody(path)
	if err != nil {
		return nil, readErr(err)
	}
	f, err := from("import "+path, body, req)
	if err != nil {
		var nt *fixture.NotTextError
		if errors.As(err, &nt) {
			return nil, readErr(fmt.Errorf("--sse %s: %w: use %s for other bodies", path, err, otherBodies))
		}
		return nil, readErr(fmt.Errorf("%s: %w", path, err))
	}
	return f, nil
}

func runDryrun(ctx context.Context, o *globalOpts, d *dryrunOpts) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	if format == "table" {
		format = "text" // the trace's table and its notes
	}
	if d.chain == "" {
		return usageErr(errors.New("--chain is required"))
	}
	fs, err := openExchange(d.args, d.sse, d.json, d.request, "--json or a fixture file (abctl fixture import --har)")
	if err != nil {
		return err
	}
	defer fs.Close()
	dir, plugins, err := d.entries(fs.Fixture)
	if err != nil {
		return err
	}
	// The trace is written as the run produces it, so that memory does
	// not grow with the fixture (docs/perf.md): events go out one by one,
	// through one buffer flushed at the end.
	out := newReportSink(o, format)
	var rep replay.Report
	var runErr error
	var buildWarnings []*pipeline.RuleError
	err = withPluginDir(ctx, o, d.plugins, plugins, func(factories []gateway.Factory) error {
		ch, err := replay.LoadChain(ctx, d.chain, dir, factories)
		if err != nil {
			return readErr(err)
		}
		buildWarnings = ch.Warnings()
		// Stopped before the plugin processes are: shutdown calls reach them.
		defer func() {
			cctx, cancel := o.app.closeCtx(ctx)
			defer cancel()
			ch.Close(cctx)
		}()
		rep, runErr = replay.RunStream(ctx, ch.Chain, fs, out.event)
		return nil
	})
	// An interrupt is reported as one whatever stage it cut short: loading a
	// plugin, building the chain or running the exchange.
	if cerr := context.Cause(ctx); cerr != nil {
		out.bw.Flush()
		if err != nil {
			cerr = fmt.Errorf("%w (%v)", cerr, err)
		}
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("dryrun interrupted: %w", cerr)}
	}
	if err != nil {
		return err
	}
	if runErr != nil {
		var oe *outputError
		if errors.As(runErr, &oe) {
			return writeOut(oe.err)
		}
		out.bw.Flush()
		return readErr(runErr)
	}
	// What the build reported without refusing (P5, X1, X2) comes first.
	if len(buildWarnings) > 0 {
		ws := make([]string, 0, len(buildWarnings)+len(rep.Warnings))
		for _, w := range buildWarnings {
			ws = append(ws, strings.TrimPrefix(w.Error(), "warning: "))
		}
		rep.Warnings = append(ws, rep.Warnings...)
	}
	return out.finish(rep)
}

// entries resolves the direction to run (--direction, else the fixture's)
// and the plugins of the chain's entries in it; a direction with no entries
// is a usage error.
func (d *dryrunOpts) entries(f *fixture.Fixture) (gateway.Direction, []chainPlugin, error) {
	dirName := d.direction
	if dirName == "" {
		dirName = f.Direction
	}
	dir, err := replay.ParseDirection(dirName)
	if err != nil {
		return dir, nil, usageErr(err)
	}
	cf, err := catalog.ReadChainFile(d.chain)
	if err != nil {
		return dir, nil, readErr(err)
	}
	plugins := entryPlugins(cf, dir)
	if len(plugins) == 0 {
		// The file is fine; the direction asked of it is not (exit 2).
		other := gateway.Outbound
		if dir == gateway.Outbound {
			other = gateway.Inbound
		}
		from := "--direction " + dir.String()
		if d.direction == "" {
			from = "the fixture's direction (" + dir.String() + ")"
		}
		return dir, nil, usageErr(fmt.Errorf("%s: %s has no %s entries; add an %q list to it, or run with --direction %s", from, d.chain, dir, dir.String(), other))
	}
	return dir, plugins, nil
}

// reportSink writes dryrun's report in one format (text, json or yaml)
// event by event, through one buffer on Out.
type reportSink struct {
	o      *globalOpts
	format string
	bw     *bufio.Writer
	tw     *tableWriter
	rw     *replay.ReportWriter
	yw     *yamlReportWriter
}

func newReportSink(o *globalOpts, format string) *reportSink {
	s := &reportSink{o: o, format: format, bw: bufio.NewWriterSize(o.app.Out, 64<<10)}
	switch format {
	case "json":
		s.rw = replay.NewReportWriter(s.bw)
	case "yaml":
		s.yw = &yamlReportWriter{w: s.bw}
	default:
		s.tw = newTableWriter(o, s.bw)
	}
	return s
}

// event writes one event. Its error is the output's (an *outputError, so
// it exits as write errors do); any other error of the run is the
// fixture's (exit 3).
func (s *reportSink) event(e *trace.Event) error {
	var err error
	switch s.format {
	case "json":
		err = s.rw.Event(e)
	case "yaml":
		err = s.yw.event(e)
	default:
		err = s.tw.event(e)
	}
	if err != nil {
		return &outputError{err}
	}
	return nil
}

// finish writes the outcome and warnings and flushes.
func (s *reportSink) finish(rep replay.Report) error {
	switch s.format {
	case "json":
		if err := s.rw.Finish(rep.Outcome, rep.Warnings); err != nil {
			return writeOut(err)
		}
		return writeOut(s.bw.Flush())
	case "yaml":
		if err := s.yw.finish(rep.Outcome, rep.Warnings); err != nil {
			return writeOut(err)
		}
		return writeOut(s.bw.Flush())
	}
	if err := s.tw.flush(); err != nil {
		return writeOut(err)
	}
	if err := s.bw.Flush(); err != nil {
		return writeOut(err)
	}
	return writeOut(printOutcome(s.o, rep))
}

// outputError is a failure to write the trace.
type outputError struct{ err error }

func (e *outputError) Error() string { return e.err.Error() }

// yamlReportWriter writes a report as YAML event by event: the document
// writeData would write for the whole report (the same keys, in the same
// order), without holding it. Each event is converted as writeData
// converts values (JSON, then YAML) and indented as a sequence item.
type yamlReportWriter struct {
	w   io.Writer
	n   int
	buf bytes.Buffer
}

// item writes v converted to YAML, each line after prefix for the first
// and indent for the rest.
func (y *yamlReportWriter) item(v any, first, indent string) error {
	doc, j, safe, err := yamlOf(v)
	if err != nil {
		return err
	}
	if !safe {
		// Control characters from traffic or a plugin, which the YAML
		// library writes raw: this item as JSON (flow YAML), escaped.
		doc = append(termsafe.JSON(j), '\n')
	}
	y.buf.Reset()
	for i, line := range bytes.SplitAfter(bytes.TrimSuffix(doc, []byte("\n")), []byte("\n")) {
		if i == 0 {
			y.buf.WriteString(first)
		} else {
			y.buf.WriteString(indent)
		}
		y.buf.Write(line)
	}
	y.buf.WriteByte('\n')
	_, err = y.w.Write(y.buf.Bytes())
	return err
}

func (y *yamlReportWriter) event(e *trace.Event) error {
	if y.n == 0 {
		if _, err := io.WriteString(y.w, "events:\n"); err != nil {
			return err
		}
	}
	y.n++
	return y.item(e, "- ", "  ")
}

func (y *yamlReportWriter) finish(o replay.Outcome, warnings []string) error {
	head := "outcome:\n"
	if y.n == 0 {
		head = "events: []\noutcome:\n"
	}
	if _, err := io.WriteString(y.w, head); err != nil {
		return err
	}
	if err := y.item(o, "  ", "  "); err != nil {
		return err
	}
	if len(warnings) > 0 {
		if _, err := io.WriteString(y.w, "warnings:\n"); err != nil {
			return err
		}
		for _, w := range warnings {
			if err := y.item(w, "- ", "  "); err != nil {
				return err
			}
		}
	}
	return nil
}

// openExchange opens the exchange a command names, as loadExchange does,
// but a fixture file is checked whole and then read chunk by chunk as it
// is replayed (fixture.Open), so that memory does not grow with it.
func openExchange(args []string, sse, jsonBody, request, otherBodies string) (*fixture.Stream, error) {
	if len(args) == 1 && sse == "" && jsonBody == "" && request == "" {
		s, err := fixture.Open(args[0])
		if err != nil {
			return nil, readErr(err)
		}
		return s, nil
	}
	f, err := loadExchange(args, sse, jsonBody, request, otherBodies)
	if err != nil {
		return nil, err
	}
	return fixture.StreamOf(f), nil
}

// tableWriter prints trace rows as they come. Off a terminal each row is a
// tab-separated line at once; on one, rows are aligned a page at a time
// (tablePage rows), so a long trace neither waits for its end nor is held
// whole.
type tableWriter struct {
	o     *globalOpts
	w     io.Writer
	p     painter
	rows  [][]string
	pages int
	buf   []byte
}

const tablePage = 1000

func newTableWriter(o *globalOpts, w io.Writer) *tableWriter {
	return &tableWriter{o: o, w: w, p: outPainter(o.app, o.noColor)}
}

func (t *tableWriter) event(e *trace.Event) error {
	if !t.o.app.OutTerminal {
		return t.line(e)
	}
	t.rows = append(t.rows, eventRow(t.p, e))
	if len(t.rows) >= tablePage {
		return t.flush()
	}
	return nil
}

// line writes e as one tab-separated row (what writeTable writes off a
// terminal), building it in one reused buffer: a dry-run writes a row per
// call, and garbage per row is what raised its peak memory.
func (t *tableWriter) line(e *trace.Event) error {
	b := t.buf[:0]
	cell := func(s string) { b = append(b, termsafe.String(cellSpaces.Replace(s))...) }
	b = strconv.AppendInt(b, int64(e.Seq), 10)
	b = append(b, '\t')
	cell(e.Hook)
	b = append(b, '\t')
	cell(e.Plugin)
	b = append(b, '\t')
	if e.Frame != nil {
		b = strconv.AppendInt(b, int64(*e.Frame), 10)
		if e.Last {
			b = append(b, " last"...)
		}
	}
	b = append(b, '\t')
	action := e.Action
	if action != "continue" {
		action = t.p.red(action)
	}
	cell(action)
	b = append(b, '\t')
	if e.Status != 0 || e.Reason != "" || e.Mutated != "" || e.Shadow || e.Error != "" || len(e.Headers) > 0 || e.Rejection != nil || len(e.Extensions) > 0 {
		cell(eventDetail(e))
	}
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.DurationNS/1000, 10)
	b = append(b, '\n')
	t.buf = b
	_, err := t.w.Write(b)
	return err
}

func (t *tableWriter) flush() error {
	if len(t.rows) == 0 && t.pages > 0 {
		return nil
	}
	var header []string
	if t.pages == 0 {
		header = []string{"SEQ", "HOOK", "PLUGIN", "FRAME", "ACTION", "DETAIL", "µS"}
	}
	t.pages++
	err := writeTable(t.w, t.o.app.OutTerminal, t.o.app.tableWidth(), t.p, header, t.rows)
	t.rows = t.rows[:0]
	return err
}

func eventRow(p painter, e *trace.Event) []string {
	frame := ""
	if e.Frame != nil {
		frame = strconv.Itoa(*e.Frame)
		if e.Last {
			frame += " last"
		}
	}
	action := e.Action
	if action != "continue" {
		action = p.red(action)
	}
	return []string{strconv.Itoa(e.Seq), e.Hook, e.Plugin, frame, action, eventDetail(e), strconv.FormatInt(e.DurationNS/1000, 10)}
}

// eventDetail is the DETAIL column: status, reason, mutation, shadow and
// error.
func eventDetail(e *trace.Event) string {
	detail := e.Reason
	if e.Status != 0 {
		detail = fmt.Sprintf("%d %s", e.Status, detail)
	}
	if e.Mutated != "" {
		detail = joinNonEmpty(detail, "mutated "+e.Mutated)
	}
	if len(e.Headers) > 0 {
		detail = joinNonEmpty(detail, "headers "+e.HeaderSummary())
	}
	if e.Rejection != nil {
		detail = joinNonEmpty(detail, "rejection "+e.Rejection.String())
	}
	if e.Shadow {
		detail = joinNonEmpty(detail, "shadow")
	}
	if e.Error != "" {
		detail = joinNonEmpty(detail, "error: "+e.Error)
	}
	for _, x := range e.Extensions {
		detail = joinNonEmpty(detail, extensionDetail(x))
	}
	return detail
}

// extDetailMax is how much of an extension value the table shows; -o json
// and -o yaml show it whole.
const extDetailMax = 200

// extensionDetail is one extension change in the DETAIL column:
// "ext inference={...}", "ext inference removed" or "ext inference
// refused: why".
func extensionDetail(x trace.ExtensionDelta) string {
	switch {
	case x.Refused != "":
		return "ext " + x.Key + " refused: " + x.Refused
	case x.Removed:
		return "ext " + x.Key + " removed"
	}
	v := string(x.Value)
	if len(v) > extDetailMax {
		cut := extDetailMax
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut] + "…"
	}
	return "ext " + x.Key + "=" + v
}

// printOutcome prints the outcome and warnings after the trace's rows.
func printOutcome(o *globalOpts, rep replay.Report) error {
	p := outPainter(o.app, o.noColor)
	w := o.app.Out
	oc := rep.Outcome
	line := fmt.Sprintf("outcome: %s %d", oc.Kind, oc.Status)
	if oc.DeniedBy != "" {
		line += " by " + oc.DeniedBy
	}
	if oc.Reason != "" {
		line += ": " + oc.Reason
	}
	// On a terminal the outcome follows the table; off one, stdout keeps
	// only the table's rows (one event per line) and the outcome and
	// warnings go to stderr, so a pipe reads pure data.
	ow, blank := io.Writer(w), "\n"
	if !o.app.OutTerminal {
		ow, blank, p = o.app.Err, "", newPainter(o.app, o.noColor)
	}
	if _, err := fmt.Fprintf(ow, "%s%s (streamed=%t frames=%d relayed=%d bytes)\n", blank, termsafe.String(line), oc.Streamed, oc.Frames, oc.Relayed); err != nil {
		return err
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(ow, "%s %s\n", p.yellow("warning:"), termsafe.String(wn))
	}
	return nil
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// chainPlugin is one plugin a chain entry names, with the entry's
// source: (builtin, dir or empty) and where the entry stands (file:line).
type chainPlugin struct {
	name, source, at string
}

// entryPlugins lists the plugins of cf's dir chain, in order: what
// withPluginDir loads.
func entryPlugins(cf *catalog.ChainFile, dir gateway.Direction) []chainPlugin {
	var out []chainPlugin
	for i, e := range cf.Direction(dir) {
		out = append(out, chainPlugin{name: e.Name, source: e.Source, at: cf.EntryAt(dir, i)})
	}
	return out
}

// withPlugins calls run with the app's in-process pipeline plugins plus,
// for every name in names that is not one of them, the plugin binary
// pluginDir/NAME loaded through the go-plugin host. The plugin processes
// are stopped and reaped when withPlugins returns, on every path: run's
// result, a load error, a panic, or a cancelled ctx (SIGINT in abctl).
func withPlugins(ctx context.Context, app *App, pluginDir string, names []string, run func([]gateway.Factory) error) error {
	plugins := make([]chainPlugin, len(names))
	for i, n := range names {
		plugins[i] = chainPlugin{name: n}
	}
	return withPluginDir(ctx, &globalOpts{app: app}, pluginDirOpts{dir: pluginDir}, plugins, run)
}

// pluginDirOpts are the --plugin-dir and --prefer-dir flags of the
// commands that run a chain.
type pluginDirOpts struct {
	dir    string
	prefer bool
}

// flags adds --plugin-dir and --prefer-dir to f.
func (p *pluginDirOpts) flags(f *pflag.FlagSet) {
	f.StringVar(&p.dir, "plugin-dir", "", "directory of plugin binaries: a chain entry that is not built in runs from DIR/NAME through go-plugin")
	f.BoolVar(&p.prefer, "prefer-dir", false, "with --plugin-dir, a chain entry that is built in but also a binary DIR/NAME runs the binary")
}

// withPluginDir is withPlugins with --prefer-dir and the entries'
// source: a name that is built in and also a binary in the directory runs
// the binary when its entry says source: dir, or says nothing and
// p.prefer is set, else the built-in; either way a note on stderr says
// which, so a binary is never shadowed silently.
func withPluginDir(ctx context.Context, o *globalOpts, p pluginDirOpts, plugins []chainPlugin, run func([]gateway.Factory) error) error {
	app, pluginDir := o.app, p.dir
	factories := app.pipeline()
	have := map[string]bool{}
	for _, f := range factories {
		have[f.Name] = true
	}
	if err := checkSources(plugins, have, pluginDir); err != nil {
		return err
	}
	if pluginDir == "" {
		return run(factories)
	}
	host := pluginhost.NewHost(app.PluginHost)
	defer host.Close()
	// A signal (ctx cancelled) ends a call that hangs in a plugin now,
	// not when its call timeout fires.
	defer context.AfterFunc(ctx, host.AbortCalls)()
	note := newPainter(app, o.noColor).dim("note:")
	for _, cp := range plugins {
		name := cp.name
		if have[name] {
			path := binaryPath(pluginDir, name)
			_, err := os.Stat(path)
			switch {
			case cp.source == catalog.SourceBuiltin:
				continue
			case cp.source == catalog.SourceDir:
				fmt.Fprintf(app.Err, "%s chain entry %q runs %s, not the built-in plugin (source: dir)\n", note, name, path)
			case err != nil || !p.prefer:
				if err == nil {
					fmt.Fprintf(app.Err, "%s chain entry %q runs the built-in plugin; %s has its name and is not started (--prefer-dir runs it)\n", note, name, path)
				}
				continue
			default:
				fmt.Fprintf(app.Err, "%s chain entry %q runs %s, not the built-in plugin (--prefer-dir)\n", note, name, path)
			}
			factories = slices.DeleteFunc(factories, func(f gateway.Factory) bool { return f.Name == name })
			have[name] = false
		}
		if have[name] {
			continue
		}
		have[name] = true
		f, err := loadBinary(ctx, host, pluginDir, name)
		if err != nil {
			return readErr(fmt.Errorf("chain entry %q: %w", name, err))
		}
		factories = append(factories, f)
	}
	return run(factories)
}

// checkSources refuses an entry's source: this run cannot honour, naming
// the entry's file and line: builtin for a name abctl has not built in,
// dir without --plugin-dir.
func checkSources(plugins []chainPlugin, builtin map[string]bool, pluginDir string) error {
	for _, cp := range plugins {
		switch {
		case cp.source == catalog.SourceBuiltin && !builtin[cp.name]:
			return readErr(fmt.Errorf("%s: chain entry %q: source: builtin, but abctl has no built-in plugin of that name: leave source out to run DIR/%s of --plugin-dir, or fix the name", cp.at, cp.name, cp.name))
		case cp.source == catalog.SourceDir && pluginDir == "":
			return usageErr(fmt.Errorf("%s: chain entry %q: source: dir runs the binary of --plugin-dir, and none is given: add --plugin-dir DIR, or leave source out", cp.at, cp.name))
		}
	}
	return nil
}

// binaryPath is the plugin binary pluginDir/NAME (NAME.exe on Windows).
func binaryPath(pluginDir, name string) string {
	path := filepath.Join(pluginDir, name)
	if runtime.GOOS == "windows" {
		path += ".exe"
	}
	return path
}

// loadBinary starts pluginDir/name and returns its pipeline factory.
func loadBinary(ctx context.Context, host *pluginhost.Host, pluginDir, name string) (gateway.Factory, error) {
	path := binaryPath(pluginDir, name)
	cmd := catalog.Command{Argv: []string{path}}
	if _, err := os.Stat(path); err != nil {
		// An interpreted plugin: DIR/NAME.abkit.json names its command line.
		m := filepath.Join(pluginDir, name+catalog.ManifestSuffix)
		if _, merr := os.Stat(m); merr != nil {
			return gateway.Factory{}, fmt.Errorf("not built in and no binary %s (nor a manifest %s): build it into --plugin-dir or fix the name", path, m)
		}
		if cmd, _, err = catalog.ReadManifest(m); err != nil {
			return gateway.Factory{}, err
		}
		path = m
	}
	p, err := host.LoadCommand(ctx, cmd)
	if err != nil {
		return gateway.Factory{}, err
	}
	if p.Name() != name {
		return gateway.Factory{}, fmt.Errorf("binary %s describes itself as %q: rename the binary or the chain entry", path, p.Name())
	}
	f, ok := p.Factory()
	if !ok {
		return gateway.Factory{}, fmt.Errorf("binary %s serves no pipeline plugin (family P), which a chain entry needs", path)
	}
	return f, nil
}
