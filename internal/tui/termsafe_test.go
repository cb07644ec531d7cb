package tui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/catalog"
)

// hostile is a description a url: or file: source could serve: it sets
// the window title, clears the screen and hides the text after it.
const hostile = "\x1b]0;PWNED\x07\x1b[2J\x1b[8mhidden\u009b31m"

// Names and descriptions from catalog sources reach the screen escaped, in
// the list, the detail pane and the status bar: the terminal sees the
// bytes, never the sequences.
func TestCatalogTextEscaped(t *testing.T) {
	opts := testOptions(t)
	load := opts.LoadCatalog
	opts.LoadCatalog = func(ctx context.Context) (*catalog.Catalog, error) {
		c, err := load(ctx)
		if err != nil {
			return nil, err
		}
		c.Plugins[0].Description = hostile
		c.Plugins[0].Version = "v1\x1b[31m"
		c.Notes = append(c.Notes, catalog.Note{Source: "url:x", Msg: hostile})
		return c, nil
	}
	m := loaded(t, opts, 160, 40)
	press(t, m, k("enter")) // the first plugin's detail
	screens := []string{m.Render()}
	m.setErr(errors.New("load: " + hostile))
	screens = append(screens, m.Render())
	for _, s := range screens {
		for _, raw := range []string{"\x1b]0;", "\x1b[2J", "\x1b[8m", "\u009b", "\x07"} {
			if strings.Contains(s, raw) {
				t.Errorf("screen holds the raw sequence %q", raw)
			}
		}
		if !strings.Contains(s, `\x1b]0;PWNED\x07`) {
			t.Errorf("escaped description not shown:\n%s", plain(m))
		}
	}
}
