// Package cli holds abctl's commands. Commands write data to the App's Out
// and messages to its Err, and take everything else (catalog options,
// terminal detection, environment) from the [App], so tests run them
// in-process without globals.
//
// Every command has one shape, one file each (catalog_list.go for
// `abctl catalog list`): an xOpts struct that its flags and arguments fill
// and nothing else, newXCmd(o) that builds the cobra command around it,
// and runX(ctx, o, opts) that does the work. o holds the global flags and
// the App; a command group's file holds only the group.
//
// Exit codes: 0 ok, 1 findings, 2 usage, 3 a plugin, file or gateway could
// not be read. [Main] maps errors to them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/buildinfo"
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/exitcode"
	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/termsafe"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitUsage    = 2
	ExitRead     = 3
	// ExitInterrupted is a run stopped by SIGINT, as a shell reports it;
	// SIGTERM is 143 (see internal/interrupt).
	ExitInterrupted = 130
)

// App is what commands run against.
type App struct {
	Out, Err io.Writer
	// OutTerminal reports whether Out is a terminal: tables are aligned
	// with a header there, and plain tab-separated lines otherwise.
	OutTerminal bool
	// ErrTerminal reports whether Err is a terminal; colour on messages
	// needs it.
	ErrTerminal bool
	// OutWidth is the width in cells of the terminal Out is, 0 when
	// unknown. COLUMNS, when set, overrides it. Aligned tables are fitted
	// to it; plain (non-terminal) output is never cut or wrapped.
	OutWidth int
	// Getenv reads the environment (NO_COLOR); nil means an empty one.
	Getenv func(string) string
	// Catalog configures the catalog sources.
	Catalog catalog.Options
	// Version, Commit and Date identify a release build (set at link
	// time); empty, they come from what Go stamped into the binary
	// (internal/buildinfo).
	Version, Commit, Date string
	// Pipeline lists the in-process pipeline plugins dryrun and replay
	// run; nil means [PipelineFactories].
	Pipeline func() []gateway.Factory
	// PluginHost configures how dryrun --plugin-dir starts plugin
	// binaries. A nil Stderr drops the plugins' own logs (go-plugin's
	// debug lines among them); a failed call still quotes their last lines.
	PluginHost pluginhost.Options
	// InterruptGrace bounds the shutdown calls to plugins after a signal
	// cancelled the command; zero means 2 s. Their processes are killed
	// after it either way.
	InterruptGrace time.Duration
}

// closeCtx is the context for stopping plugins at the end of a command: a
// normal end gives them the call timeout, an interrupted one only the
// interrupt grace, so a plugin hung in Shutdown cannot hold up the exit.
func (a *App) closeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return context.WithoutCancel(ctx), func() {}
	}
	grace := a.InterruptGrace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	return context.WithTimeout(context.WithoutCancel(ctx), grace)
}

// build identifies the running abctl.
func (a *App) build() buildinfo.Info { return buildinfo.Read(a.Version, a.Commit, a.Date) }

func (a *App) pipeline() []gateway.Factory {
	if a.Pipeline == nil {
		return PipelineFactories()
	}
	return a.Pipeline()
}

// tableWidth is the width terminal tables are fitted to: COLUMNS when it
// is a positive number, else OutWidth; 0 means no limit.
func (a *App) tableWidth() int {
	if n, err := strconv.Atoi(a.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return a.OutWidth
}

func (a *App) getenv(k string) string {
	if a.Getenv == nil {
		return ""
	}
	return a.Getenv(k)
}

// ExitError carries an exit code; a nil Err means the output already said
// everything, so nothing more is printed.
type ExitError = exitcode.Error

func usageErr(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// ExitCode maps an error returned by a command to abctl's exit code.
func ExitCode(err error) int {
	var ee *ExitError
	var re *catalog.ReadError
	var pe *catalog.PosError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, catalog.ErrBadSource):
		return ExitUsage
	case limits.Is(err), errors.As(err, new(*fixture.TooLargeError)):
		return ExitRead
	case errors.As(err, &re), errors.As(err, &pe):
		return ExitRead
	}
	// Anything cobra itself reports (unknown command or flag, wrong number
	// of arguments) is a usage error; command errors are typed above.
	return ExitUsage
}

// MainWithSignals is abctl's main: Main with SIGINT and SIGTERM handled
// alike (see internal/interrupt): the first cancels the command, which
// stops its plugin processes on the way out; the second kills every plugin
// process group and exits at once.
func MainWithSignals(app *App, args []string) int {
	groups := app.PluginHost.Groups
	if groups == nil {
		groups = pluginhost.NewGroups()
		app.PluginHost.Groups = groups
	}
	if d, ok := app.Catalog.Describer.(pluginhost.Describer); ok && d.Options.Groups == nil {
		d.Options.Groups = groups
		app.Catalog.Describer = d
	}
	return exitcode.WithSignals(groups, func(ctx context.Context) int { return Main(ctx, app, args) })
}

// Main runs abctl with args, prints any error to Err and returns the exit
// code. (record stops on SIGINT as its normal end and exits 0.)
func Main(ctx context.Context, app *App, args []string) int {
	root := NewRoot(app)
	root.SetArgs(args)
	return exitcode.Main(ctx, app.Err, exitcode.Program{
		Prefix: newPainter(app, false).red("abctl:"),
		Help:   "abctl --help",
		Usage:  ExitUsage,
		Code:   ExitCode,
	}, func() error { return root.ExecuteContext(ctx) })
}

// NewRoot builds the abctl command tree.
func NewRoot(app *App) *cobra.Command {
	o := &globalOpts{app: app}
	root := &cobra.Command{
		Use:   "abctl",
		Short: "Browse plugin catalogs and validate plugin chains",
		Long: `abctl is the operator's tool for abkit plugin pipelines: it lists the
plugins a catalog source provides, lints them against the contract rules,
validates chain files before any traffic flows, dry-runs recorded traffic
through a chain and replays a corpus against golden traces.

Bare 'abctl' on a terminal opens the terminal UI (the same as 'abctl ui');
off a terminal it prints the catalog list.

Exit codes: 0 ok, 1 findings, 2 usage, 3 a plugin, file or gateway could
not be read.`,
		Example:           "  abctl catalog list\n  abctl chain validate chain.yaml",
		SilenceUsage:      true,
		SilenceErrors:     true,
		DisableAutoGenTag: true,
	}
	root.SetOut(app.Out)
	root.SetErr(app.Err)
	root.Version = app.build().String()
	root.SetVersionTemplate("abctl {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(err) })
	pf := root.PersistentFlags()
	pf.StringArrayVar(&o.sources, "source", nil, "catalog source: builtin, dir:PATH, file:PATH or url:URL (repeatable; default builtin)")
	pf.StringVarP(&o.output, "output", "o", "table", "output format: table, json or yaml")
	pf.BoolVar(&o.noColor, "no-color", false, "disable colour (also when NO_COLOR is set)")
	pf.BoolVar(&o.noCache, "no-cache", false, "describe every dir: binary afresh, without reading or writing the description cache")
	pf.DurationVar(&o.describeTimeout, "describe-timeout", 0, "how long one dir: binary may take to start and describe itself before it is left out with a note (0: the default, 5s)")
	_ = root.RegisterFlagCompletionFunc("source", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"builtin", "dir:", "file:", "url:"}, cobra.ShellCompDirectiveNoSpace
	})
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"table", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))

	root.AddCommand(newCatalogCmd(o), newChainCmd(o), newVersionCmd(o))
	root.AddCommand(newDryrunCmd(o), newFixtureCmd(o), newRecordCmd(o), newReplayCmd(o), newServeCmd(o))
	root.AddCommand(newUICmd(o), newCacheCmd(o))
	root.RunE = runRoot(o) // ui.go: a terminal opens the TUI
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = "  source <(abctl completion bash)\n  abctl completion zsh > \"${fpath[1]}/_abctl\""
		}
	}
	return root
}

// globalOpts are the persistent flags every command sees.
type globalOpts struct {
	app     *App
	sources []string
	output  string
	noColor bool
	noCache bool
	// describeTimeout bounds describing one dir: binary; 0 keeps the
	// catalog's default (a slow or loaded machine may need more).
	describeTimeout time.Duration
}

// catalogOptions are the app's catalog options with --no-cache applied.
func (o *globalOpts) catalogOptions() catalog.Options {
	opts := o.app.Catalog
	if o.noCache {
		opts.CacheDir = "-"
	}
	if o.describeTimeout > 0 {
		opts.DescribeTimeout = o.describeTimeout
	}
	return opts
}

// loadCatalog loads the catalog from the --source flags (default builtin)
// and prints the sources' notes to Err.
func (o *globalOpts) loadCatalog(ctx context.Context) (*catalog.Catalog, error) {
	srcs := o.sources
	if len(srcs) == 0 {
		srcs = []string{"builtin"}
	}
	c, err := catalog.Load(ctx, srcs, o.catalogOptions())
	if err != nil {
		return nil, err
	}
	p := newPainter(o.app, o.noColor)
	for _, n := range c.Notes {
		fmt.Fprintf(o.app.Err, "%s %s\n", p.dim("note:"), termsafe.String(n.String()))
	}
	return c, nil
}

// format returns the output format, checked.
func (o *globalOpts) format() (string, error) {
	switch o.output {
	case "table", "json", "yaml":
		return o.output, nil
	}
	return "", usageErr(fmt.Errorf("output format %q: want table, json or yaml", o.output))
}

// formatAndCatalog returns the checked output format and then the loaded
// catalog: an unknown -o is a usage error before any source is read.
func (o *globalOpts) formatAndCatalog(ctx context.Context) (string, *catalog.Catalog, error) {
	format, err := o.format()
	if err != nil {
		return "", nil, err
	}
	cat, err := o.loadCatalog(ctx)
	if err != nil {
		return "", nil, err
	}
	return format, cat, nil
}

// completeNames completes plugin names from the catalog the --source flags
// name.
func (o *globalOpts) completeNames(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := o.loadCatalog(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, d := range c.Plugins {
		out = append(out, cobra.CompletionWithDesc(d.Name, d.Description))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// groupRunE makes a command group print its help when called alone and
// fail with a usage error on an unknown subcommand, with the nearest
// subcommand when one is close, rather than print help and exit 0.
func groupRunE(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		if near := catalog.DidYouMean(args[0], names); near != "" {
			msg += "; " + near
		} else {
			msg += "; its commands are " + strings.Join(names, ", ")
		}
		return usageErr(errors.New(msg))
	}
	return cmd.Help()
}

// exactArgs is cobra.ExactArgs with a usage exit code and a message that
// names what is missing or extra, from the command's Use line ("validate
// CHAIN" → "missing CHAIN file").
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		names := strings.Fields(cmd.Use)[1:]
		usage := "usage: " + cmd.CommandPath()
		if len(names) > 0 {
			usage += " " + strings.Join(names, " ")
		}
		if len(args) < n && len(args) < len(names) {
			what := strings.Trim(names[len(args)], "[]")
			if what == "CHAIN" {
				what += " file"
			}
			return usageErr(fmt.Errorf("missing %s (%s)", what, usage))
		}
		if len(args) > n {
			return usageErr(fmt.Errorf("unexpected argument %q (%s)", args[n], usage))
		}
		return usageErr(fmt.Errorf("want %d argument(s), got %d (%s)", n, len(args), usage))
	}
}
