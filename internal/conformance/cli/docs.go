package cli

import (
	"io"

	"github.com/abkit/abkit/internal/clidocs"
)

// GenDocs writes one markdown reference page per conformance command into
// dir (docs/cli, beside abctl's), replacing the conformance pages there.
// `go run ./internal/cli/gendocs` calls it; a test fails when the pages are
// out of date.
func GenDocs(dir string) error {
	return clidocs.Markdown(NewRoot(&App{Out: io.Discard, Err: io.Discard}), dir)
}
