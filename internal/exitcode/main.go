package exitcode

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/abkit/abkit/internal/interrupt"
	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/termsafe"
)

// Program is what differs between the two CLIs' mains.
type Program struct {
	// Prefix starts the error line ("abctl:", coloured or not).
	Prefix string
	// Help is the command a usage error points to ("abctl --help").
	Help string
	// Usage is the program's usage exit code.
	Usage int
	// Code maps a command's error to the program's exit code.
	Code func(error) int
}

// Main is the body both CLIs' Main share: a limit variable set to nonsense
// is a usage error before anything runs (docs/limits.md); otherwise run
// runs. A command a signal cut short exits as a shell reports the signal
// (130 SIGINT, 143 SIGTERM, see internal/interrupt), unless its error
// Stands. An error is printed to
// stderr, escaped (it may quote files, plugins and traffic), unless it is
// an *Error with no Err, and a usage error points to Help.
func Main(ctx context.Context, stderr io.Writer, p Program, run func() error) int {
	err := limits.CheckEnv()
	if err != nil {
		err = &Error{Code: p.Usage, Err: err}
	} else {
		err = run()
	}
	code := p.Code(err)
	var ee *Error
	stands := errors.As(err, &ee) && ee.Stands
	if sc, ok := interrupt.Code(ctx); ok && code != 0 && !stands {
		code = sc
	}
	if err != nil && !(errors.As(err, &ee) && ee.Err == nil) {
		fmt.Fprintf(stderr, "%s %s\n", p.Prefix, termsafe.String(err.Error()))
		if code == p.Usage {
			fmt.Fprintf(stderr, "Run '%s' for usage.\n", p.Help)
		}
	}
	return code
}

// WithSignals is the part of both CLIs' MainWithSignals that is the same:
// SIGINT and SIGTERM are handled alike (see internal/interrupt): the first
// cancels main's context, which stops the plugin processes on the way out;
// the second kills every process group of groups and exits at once. What a
// plugin or runtime forks into a session of its own is reparented here and
// killed when it stops and at exit (pluginhost.AdoptOrphans).
func WithSignals(groups *pluginhost.Groups, main func(ctx context.Context) int) int {
	_ = pluginhost.AdoptOrphans()
	defer pluginhost.KillOrphans()
	ctx, stop := interrupt.Notify(context.Background(), groups.KillAll)
	defer stop()
	return main(ctx)
}
