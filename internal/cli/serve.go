package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/netlimit"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/internal/replay/live"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type serveOpts struct {
	chain, upstream, listen, record, direction string
	plugins                                    pluginDirOpts
	ring, bodyCap                              int
	grace                                      time.Duration
	ui                                         bool
	limits                                     netlimit.Limits
	eventWrite                                 time.Duration
	apiToken                                   string
	noAPI                                      bool
}

func newServeCmd(o *globalOpts) *cobra.Command {
	s := &serveOpts{}
	c := &cobra.Command{
		Use:   "serve --chain CHAIN.yaml --upstream URL",
		Short: "Run a chain live as a local gateway in front of an upstream",
		Long: `Run a chain on the reference runtime as a reverse proxy on --listen: every
request goes through the chain's OnRequest calls, then to --upstream (the
path exactly as sent), and the upstream's answer back through the
response side to the client. A text/event-stream response is relayed
frame by frame as the upstream sends it; other bodies are relayed as
they arrive, or, when a plugin reads or writes bodies, when complete (up
to 32 MiB, docs/limits.md). An upstream body that fails midway breaks the
client's connection. The chain is built and validated at start; an invalid chain is
reported with every finding (FILE:LINE:COLUMN, rule, plugin, fix) and
abctl exits 1 without listening.

Built-in plugins run in-process; with --plugin-dir DIR a chain entry that
is not built in runs from the binary DIR/NAME through go-plugin, as in
dryrun (with --prefer-dir or the entry's source: dir, also one that is
built in). --direction picks
the chain's inbound or outbound list (default outbound).

A read-only API on the same listener, under /_abkit/v1/, shows the
plugins and the pipeline (in the shape 'abctl catalog list --source url:'
reads), the last --ring exchanges with their traces (bodies cut at
--body-cap, redacted), each exchange as a fixture, and a server-sent event
stream of exchanges as they start, call plugins and finish (docs/live.md).
With --record DIR every finished exchange is also written to DIR as a
redacted fixture, as abctl record names them; abctl replay reproduces its
trace.

Stop with Ctrl-C (SIGINT) or SIGTERM: the event streams end, exchanges in
flight get --grace to finish and are then cut (their outcome says so),
the chain is stopped and plugin processes are ended; a second signal stops
at once. With --ui the terminal UI opens on its Live tab (as 'abctl ui
--attach' would) and quitting it stops serve the same way. Exit codes: 0 after a signal, 1 the chain is invalid, 2 usage,
3 a file, plugin binary or the listen address cannot be used.`,
		Example: "  abctl serve --chain chain.yaml --upstream https://api.openai.com\n" +
			"  OPENAI_BASE_URL=http://127.0.0.1:8089/v1 my-agent\n" +
			"  curl -s http://127.0.0.1:8089/_abkit/v1/exchanges\n" +
			"  abctl serve --chain chain.yaml --upstream http://127.0.0.1:9000 --record fixtures/live --plugin-dir bin/plugins",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), o, s)
		},
	}
	f := c.Flags()
	f.StringVar(&s.chain, "chain", "", "chain file (docs/chains.md); required")
	f.StringVar(&s.upstream, "upstream", "", "upstream base URL, such as https://api.example.com; required")
	f.StringVar(&s.listen, "listen", "127.0.0.1:8089", "address to listen on")
	s.plugins.flags(f)
	f.StringVar(&s.record, "record", "", "directory to write every finished exchange to as a fixture")
	f.StringVar(&s.direction, "direction", "outbound", "chain direction to run: inbound or outbound")
	f.IntVar(&s.ring, "ring", live.DefaultRing, "how many finished exchanges the API keeps")
	f.IntVar(&s.bodyCap, "body-cap", live.DefaultBodyCap, "bytes of each body the API keeps per exchange; longer bodies are cut and marked truncated")
	f.DurationVar(&s.grace, "grace", 5*time.Second, "how long exchanges in flight may take to finish after SIGINT or SIGTERM")
	serverLimitFlags(f, &s.limits)
	f.StringVar(&s.apiToken, "api-token", "", "token the API under /_abkit/ requires (Authorization: Bearer TOKEN); one is generated and printed when --listen is not a loopback address")
	f.BoolVar(&s.noAPI, "no-api", false, "turn the API under /_abkit/ off (exchanges, events and fixtures are then not served at all)")
	f.DurationVar(&s.eventWrite, "event-write-timeout", live.DefaultEventWriteTimeout, "how long one write to an event-stream subscriber may block before it is cut")
	f.BoolVar(&s.ui, "ui", false, "open the terminal UI on its Live tab, attached to this serve; quitting it stops serve (s saves into RECORD/saved with --record, else the current directory)")
	_ = c.RegisterFlagCompletionFunc("chain", completeYAML)
	_ = c.RegisterFlagCompletionFunc("direction", cobra.FixedCompletions([]cobra.Completion{"inbound", "outbound"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func runServe(ctx context.Context, o *globalOpts, s *serveOpts) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	if s.chain == "" || s.upstream == "" {
		return usageErr(errors.New("--chain and --upstream are required"))
	}
	if s.ui && !o.app.OutTerminal {
		return usageErr(errors.New("--ui needs a terminal; without one, watch http://LISTEN/_abkit/v1/events"))
	}
	if s.ring <= 0 || s.bodyCap <= 0 || s.grace < 0 {
		return usageErr(errors.New("--ring and --body-cap must be positive and --grace not negative"))
	}
	if s.ring > live.MaxRing || s.bodyCap > live.MaxBodyCap {
		// --ring 1000000000 allocated over 4 GiB before listening.
		return usageErr(fmt.Errorf("--ring is at most %d and --body-cap at most %d (32 MiB): the ring holds ring × 2 × body-cap bytes of bodies", live.MaxRing, live.MaxBodyCap))
	}
	dir, err := replay.ParseDirection(s.direction)
	if err != nil {
		return usageErr(err)
	}
	cf, err := catalog.ReadChainFile(s.chain)
	if err != nil {
		return readErr(err)
	}
	plugins := entryPlugins(cf, dir)
	if len(plugins) == 0 {
		return usageErr(fmt.Errorf("%s has no %s entries; add an %q list to it or pick the other --direction", s.chain, dir, dir.String()))
	}
	if s.record != "" {
		if err := os.MkdirAll(s.record, 0o755); err != nil {
			return readErr(fmt.Errorf("--record: %w", err))
		}
	}
	// A signal while plugins load or the chain starts aborts that at once;
	// once serving, it starts the graceful stop instead, and in-flight
	// plugin calls are not aborted.
	runCtx, cancelRun := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelRun(nil)
	serving := make(chan struct{})
	stopEarly := context.AfterFunc(ctx, func() {
		select {
		case <-serving:
		default:
			cancelRun(context.Cause(ctx))
		}
	})
	defer stopEarly()
	log := slog.New(slog.NewTextHandler(o.app.Err, nil))
	if s.ui {
		// The screen is the TUI's; what a log line would say, the Live
		// tab shows (cut exchanges, outcomes).
		log = slog.New(slog.DiscardHandler)
	}
	err = withPluginDir(runCtx, o, s.plugins, plugins, func(factories []gateway.Factory) error {
		ch, err := replay.LoadChain(runCtx, s.chain, dir, factories)
		if err != nil {
			var be *pipeline.BuildError
			if errors.As(err, &be) {
				return reportBuildError(o, cf, be)
			}
			return readErr(err)
		}
		for _, w := range ch.Warnings() {
			// Reported, not refused (P5, X1, X2: docs/contracts.md).
			fmt.Fprintln(o.app.Err, termsafe.String(w.Error()))
		}
		defer func() {
			cctx, cancel := o.app.closeCtx(ctx)
			defer cancel()
			ch.Close(cctx)
		}()
		srv, err := live.New(live.Options{Upstream: s.upstream, Chain: ch, ChainFile: cf, Factories: factories,
			RecordDir: s.record, Ring: s.ring, BodyCap: s.bodyCap, Log: log, Limits: s.limits, EventWriteTimeout: s.eventWrite, NoAPI: s.noAPI})
		if err != nil {
			return usageErr(err)
		}
		ln, err := net.Listen("tcp", s.listen)
		if err != nil {
			return readErr(fmt.Errorf("listen %s: %w", s.listen, err))
		}
		token, err := exposure(o, ln.Addr(), s)
		if err != nil {
			ln.Close()
			return err
		}
		srv.SetAPIToken(token)
		close(serving)
		if ctx.Err() != nil { // a signal raced the listen
			ln.Close()
			return printServeStats(o, format, s.record, srv)
		}
		addr := ln.Addr().String()
		if s.ui {
			return serveWithUI(ctx, o, format, s, srv, ln, token)
		}
		fmt.Fprintf(o.app.Err, "serving %s (%s: %s) on http://%s -> %s\n", s.chain, dir, strings.Join(ch.Names(), ", "), addr, redact.URL(s.upstream))
		fmt.Fprintf(o.app.Err, "API http://%s%sv1/exchanges, events http://%s%s; Ctrl-C to stop\n", addr, live.APIPrefix, addr, live.PathEvents)
		if err := srv.Serve(ctx, ln, s.grace); err != nil {
			return readErr(err)
		}
		return printServeStats(o, format, s.record, srv)
	})
	if err == nil {
		return nil
	}
	if cerr := context.Cause(runCtx); cerr != nil {
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("serve interrupted before it started: %w (%v)", cerr, err)}
	}
	return err
}

// reportBuildError prints a chain the runtime refused to build as
// findings with their place in the file, and exits 1.
func reportBuildError(o *globalOpts, cf *catalog.ChainFile, be *pipeline.BuildError) error {
	fs := make([]catalog.Finding, 0, len(be.Errs))
	for _, re := range be.Errs {
		line, col := cf.EntryPos(be.Direction, re.Entry)
		fs = append(fs, catalog.Finding{File: cf.Path, Line: line, Column: col, Rule: re.Rule, Plugin: re.Plugin,
			Msg: fmt.Sprintf("%s chain: %s", be.Direction, re.Msg), Fix: re.Fix})
	}
	catalog.SortFindings(fs)
	p := newPainter(o.app, o.noColor)
	for _, f := range fs {
		fmt.Fprintf(o.app.Err, "%s: %s", f.Where(), p.red(f.Rule))
		if f.Plugin != "" {
			fmt.Fprintf(o.app.Err, " %s", f.Plugin)
		}
		fmt.Fprintf(o.app.Err, ": %s\n    fix: %s\n", termsafe.String(f.Msg), termsafe.String(f.Fix))
	}
	return &ExitError{Code: ExitFindings, Err: fmt.Errorf("%s: the %s chain is invalid (%d finding(s)); nothing was served", cf.Path, be.Direction, len(fs))}
}

// serveWithUI serves in the background and runs the TUI attached to it;
// quitting the TUI (or a signal) stops serve gracefully.
func serveWithUI(ctx context.Context, o *globalOpts, format string, s *serveOpts, srv *live.Server, ln net.Listener, token string) error {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(sctx, ln, s.grace) }()
	// Saved exchanges get a directory of their own: beside --record's
	// fixtures (which have no goldens) they would not make a suite that
	// replays clean.
	saveDir := "."
	if s.record != "" {
		saveDir = filepath.Join(s.record, "saved")
	}
	uerr := runUI(ctx, o, &uiOpts{chain: s.chain, pluginDir: s.plugins.dir, attach: attachURL(ln.Addr(), token), saveDir: saveDir})
	stop()
	if err := <-errc; err != nil {
		return readErr(err)
	}
	if err := printServeStats(o, format, s.record, srv); err != nil {
		return err
	}
	return uerr
}

// printServeStats reports a stopped serve: the counts on stderr and, with
// -o json/yaml, one object on stdout with the counts and the --record
// directory. serve keeps no list of the fixtures it wrote (it may run for
// days); the directory holds them.
func printServeStats(o *globalOpts, format, recordDir string, srv *live.Server) error {
	st := srv.Stats()
	msg := fmt.Sprintf("stopped: %d exchange(s) served, %d cut, %d recorded", st.Served, st.Cut, st.Recorded)
	if recordDir != "" {
		msg += " in " + recordDir
	}
	fmt.Fprintln(o.app.Err, msg)
	if format == "table" {
		return nil
	}
	return writeOut(writeData(o.app.Out, format, struct {
		Served    int64  `json:"served"`
		Cut       int64  `json:"cut"`
		Recorded  int64  `json:"recorded"`
		RecordDir string `json:"record_dir,omitempty"`
	}{st.Served, st.Cut, st.Recorded, recordDir}))
}

// serverLimitFlags adds the client-connection bounds serve and record
// share (docs/limits.md).
func serverLimitFlags(f *pflag.FlagSet, l *netlimit.Limits) {
	f.DurationVar(&l.ReadHeader, "read-header-timeout", netlimit.DefaultReadHeader, "how long a request's header may take to arrive")
	f.DurationVar(&l.ReadBody, "read-body-timeout", netlimit.DefaultReadBody, "how long a request's body may take to arrive")
	f.DurationVar(&l.Idle, "idle-timeout", netlimit.DefaultIdle, "how long an idle keep-alive connection stays open")
	f.DurationVar(&l.Write, "write-timeout", netlimit.DefaultWrite, "how long one write to a client may block before the client is cut (a progress bound: a stream that is read is never cut)")
	f.IntVar(&l.MaxConns, "max-conns", 0, "most client connections open at once; past it a connection is answered 503 (default: half the open-file limit, 32 to 10000)")
}

// exposure warns when serve listens beyond loopback and returns the API
// token to require: --api-token, or, beyond loopback, a generated one,
// printed once. On loopback without --api-token the API is open, as only
// this machine reaches it.
func exposure(o *globalOpts, addr net.Addr, s *serveOpts) (string, error) {
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return s.apiToken, nil
	}
	what := "the exchanges (redacted bodies and traces), the event stream and the fixtures under " + live.APIPrefix
	if s.noAPI {
		what = "nothing else (--no-api)"
	}
	fmt.Fprintf(o.app.Err, "warning: --listen %s (%s) is not a loopback address: anyone who reaches it can send requests through the chain to the upstream, and read %s\n", s.listen, addr, what)
	if s.noAPI || s.apiToken != "" {
		return s.apiToken, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating an API token: %w", err)
	}
	token := hex.EncodeToString(b)
	fmt.Fprintf(o.app.Err, "API token (generated, shown once; choose one with --api-token, or turn the API off with --no-api): %s\n", token)
	fmt.Fprintf(o.app.Err, "  curl -H 'Authorization: Bearer %s' http://HOST%sv1/exchanges; abctl ui --attach http://:%s@HOST\n", token, live.APIPrefix, token)
	return token, nil
}

// attachURL is the base URL the TUI attaches to: the listener, with the
// API token as the basic-authentication password when there is one.
func attachURL(addr net.Addr, token string) string {
	u := url.URL{Scheme: "http", Host: addr.String()}
	if token != "" {
		u.User = url.UserPassword("", token)
	}
	return u.String()
}
