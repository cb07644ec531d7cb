package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/tui"
	"github.com/abkit/abkit/sdk/gateway"
)

type uiOpts struct {
	chain, fixtures, pluginDir string
	attach, saveDir            string
}

func newUICmd(o *globalOpts) *cobra.Command {
	u := &uiOpts{}
	c := &cobra.Command{
		Use:   "ui",
		Short: "Browse the catalog, inspect a chain and step through dry-runs in a terminal UI",
		Long: `Open abctl's terminal UI, with three tabs:

  Catalog  the plugins of the catalog sources, filterable, with a detail
           pane (descriptor, config schema, slots, hooks, dependencies)
  Chain    the chain file per direction with validation findings inline;
           e opens it in $EDITOR and revalidates on return
  Trace    dry-run a fixture through the chain and step through every
           hook call, with frames, parsed SSE fields and body diffs

Without --chain the built-in example chain is loaded; without --fixtures
the built-in sample exchanges are offered. Built-in plugins run in-process;
a chain entry that is not built in runs in the Trace tab from its binary:
the one a dir: source lists, or DIR/NAME with --plugin-dir DIR (as dryrun
takes it). Those processes live for one dry-run and are stopped after it. 'abctl' alone on a terminal runs
'abctl ui'. Press ? in the UI for every key; docs/keys.md lists them.
Colour follows NO_COLOR and --no-color.

With --attach URL (the address of an 'abctl serve'), a fourth tab, Live,
lists that gateway's exchanges as they finish (status, outcome, the plugin
that denied, duration, a frame-count bar): / filters, space pauses the
list while new exchanges are counted, enter opens the exchange in the
Trace tab's stepper, and s saves it as a fixture into --save-dir (with
--chain, the chain serve runs, also its golden trace under
--save-dir/golden, so 'abctl replay' runs it as a test; docs/live.md).`,
		Example: "  abctl ui\n  abctl ui --chain fixtures/inference/chain.yaml --fixtures fixtures/inference\n  abctl ui --attach http://127.0.0.1:8089 --save-dir fixtures/live",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUI(cmd.Context(), o, u)
		},
	}
	f := c.Flags()
	f.StringVar(&u.chain, "chain", "", "chain file to load (default: the built-in example chain)")
	f.StringVar(&u.fixtures, "fixtures", "", "directory of fixture files, searched recursively (default: built-in samples)")
	f.StringVar(&u.pluginDir, "plugin-dir", "", "directory of plugin binaries: a chain entry that is not built in runs from DIR/NAME through go-plugin")
	f.StringVar(&u.attach, "attach", "", "base URL of an abctl serve: adds the Live tab of its exchanges")
	f.StringVar(&u.saveDir, "save-dir", ".", "directory the Live tab saves fixtures into")
	_ = c.MarkFlagDirname("plugin-dir")
	_ = c.RegisterFlagCompletionFunc("chain", completeYAML)
	_ = c.MarkFlagDirname("fixtures")
	return c
}

// runRoot is `abctl` without a command: the TUI on a terminal; otherwise
// the catalog list as plain text and a hint on stderr.
func runRoot(o *globalOpts) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if o.app.OutTerminal {
			return runUI(cmd.Context(), o, &uiOpts{})
		}
		cat, err := o.loadCatalog(cmd.Context())
		if err != nil {
			return err
		}
		if err := writeOut(printList(o, "table", cat)); err != nil {
			return err
		}
		fmt.Fprintln(o.app.Err, "abctl: not a terminal, so the catalog is printed; run 'abctl ui' in a terminal for the TUI, or 'abctl --help' for commands")
		return nil
	}
}

func runUI(ctx context.Context, o *globalOpts, u *uiOpts) error {
	m, colour, err := newUIModel(o, u)
	if err == nil {
		defer m.Close()
	}
	if err != nil {
		return err
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(o.app.Out)}
	if !colour {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// uiPlugins makes runnable, for one dry-run, the chain entries abctl does
// not have in-process: a plugin binary of a dir: source, else
// pluginDir/NAME. release stops every process it started.
func uiPlugins(app *App, pluginDir string) func(context.Context, *catalog.Catalog, []string) ([]gateway.Factory, func(), error) {
	return func(ctx context.Context, cat *catalog.Catalog, names []string) ([]gateway.Factory, func(), error) {
		host := pluginhost.NewHost(app.PluginHost)
		release := func() { host.Close() }
		var out []gateway.Factory
		for _, name := range names {
			var d *catalog.Descriptor
			if cat != nil {
				d, _ = cat.Lookup(name)
			}
			switch {
			case d != nil && d.Origin.Kind == catalog.OriginBinary:
				p, err := host.LoadCommand(ctx, d.Origin.Command())
				if err != nil {
					return nil, release, fmt.Errorf("chain entry %q: %w", name, err)
				}
				f, ok := p.Factory()
				if !ok {
					return nil, release, fmt.Errorf("chain entry %q: %s serves no pipeline plugin", name, d.Origin.Path)
				}
				out = append(out, f)
			case pluginDir != "":
				f, err := loadBinary(ctx, host, pluginDir, name)
				if err != nil {
					return nil, release, fmt.Errorf("chain entry %q: %w", name, err)
				}
				out = append(out, f)
			}
			// Otherwise the build reports the unknown plugin.
		}
		return out, release, nil
	}
}

// newUIModel builds the TUI's model from the flags; colour says whether
// it paints.
func newUIModel(o *globalOpts, u *uiOpts) (*tui.Model, bool, error) {
	xs := tui.SampleExchanges()
	if u.fixtures != "" {
		var err error
		if xs, err = loadFixtures(u.fixtures); err != nil {
			return nil, false, &ExitError{Code: ExitRead, Err: err}
		}
	}
	if u.chain != "" {
		// Fail before the screen switches when the file cannot be read; a
		// file that reads but does not decode (a YAML error) opens with the
		// error in the Chain tab, where e fixes it.
		if _, err := catalog.ReadChainFile(u.chain); err != nil {
			var pe *catalog.PosError
			if !errors.As(err, &pe) {
				return nil, false, err
			}
		}
	}
	if u.pluginDir != "" {
		if st, err := os.Stat(u.pluginDir); err != nil || !st.IsDir() {
			return nil, false, usageErr(fmt.Errorf("--plugin-dir %s: not a directory", u.pluginDir))
		}
	}
	if u.attach != "" {
		if a, err := url.Parse(u.attach); err != nil || (a.Scheme != "http" && a.Scheme != "https") || a.Host == "" {
			return nil, false, usageErr(fmt.Errorf("--attach %q: want the http:// address of an abctl serve, such as http://127.0.0.1:8089", u.attach))
		}
	}
	srcs := o.sources
	if len(srcs) == 0 {
		srcs = []string{"builtin"}
	}
	colour := !o.noColor && o.app.getenv("NO_COLOR") == ""
	m := tui.New(tui.Options{
		LoadCatalog: func(ctx context.Context) (*catalog.Catalog, error) {
			return catalog.Load(ctx, srcs, o.catalogOptions())
		},
		Sources:   srcs,
		ChainPath: u.chain,
		Factories: o.app.pipeline(),
		Plugins:   uiPlugins(o.app, u.pluginDir),
		Fixtures:  xs,
		ReloadFixtures: func() ([]tui.Exchange, error) {
			if u.fixtures == "" {
				return tui.SampleExchanges(), nil
			}
			return loadFixtures(u.fixtures)
		},
		Colour:  colour,
		Getenv:  o.app.getenv,
		Attach:  u.attach,
		SaveDir: u.saveDir,
	})
	return m, colour, nil
}

// loadFixtures reads every fixture file under dir, named by its path
// relative to dir.
func loadFixtures(dir string) ([]tui.Exchange, error) {
	var out []tui.Exchange
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") || !strings.HasSuffix(d.Name(), fixture.Ext) {
			return nil
		}
		f, err := fixture.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, tui.FromFixture(strings.TrimSuffix(filepath.ToSlash(rel), fixture.Ext), f))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fixtures %s: %w", dir, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fixtures %s: no %s files; record some with 'abctl record' or import with 'abctl fixture'", dir, fixture.Ext)
	}
	return out, nil
}
