package cli

import (
	"io"

	"github.com/abkit/abkit/internal/clidocs"
)

// GenDocs writes one markdown reference page per abctl command into dir,
// replacing the pages there. `go run ./internal/cli/gendocs` calls it; a
// test fails when docs/cli is out of date.
func GenDocs(dir string) error {
	return clidocs.Markdown(NewRoot(&App{Out: io.Discard, Err: io.Discard}), dir)
}
