package cli

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/tui"
)

type uiOpts struct {
	chain, fixtures string
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
the built-in sample exchanges are offered. 'abctl' alone on a terminal runs
'abctl ui'. Press ? in the UI for every key; docs/keys.md lists them.
Colour follows NO_COLOR and --no-color.`,
		Example: "  abctl ui\n  abctl ui --chain fixtures/inference/chain.yaml --fixtures fixtures/inference",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUI(cmd.Context(), o, u)
		},
	}
	f := c.Flags()
	f.StringVar(&u.chain, "chain", "", "chain file to load (default: the built-in example chain)")
	f.StringVar(&u.fixtures, "fixtures", "", "directory of fixture files, searched recursively (default: built-in samples)")
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
	xs := tui.SampleExchanges()
	if u.fixtures != "" {
		var err error
		if xs, err = loadFixtures(u.fixtures); err != nil {
			return &ExitError{Code: ExitRead, Err: err}
		}
	}
	if u.chain != "" {
		// Fail before the screen switches when the file cannot be read;
		// later reloads (after editing) report in the status bar.
		if _, err := catalog.ReadChainFile(u.chain); err != nil {
			return err
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
		Factories: PipelineFactories(),
		Fixtures:  xs,
		Colour:    colour,
		Getenv:    o.app.getenv,
	})
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(o.app.Out)}
	if !colour {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
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
