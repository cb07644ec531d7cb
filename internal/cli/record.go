package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/abkit/abkit/internal/netlimit"
	"github.com/abkit/abkit/internal/replay/record"
	"github.com/spf13/cobra"
)

// recordOpts are what `abctl record` runs with.
type recordOpts struct {
	upstream, listen, out string
	limits                netlimit.Limits
}

func newRecordCmd(o *globalOpts) *cobra.Command {
	r := &recordOpts{}
	c := &cobra.Command{
		Use:   "record --upstream URL --listen 127.0.0.1:PORT --out DIR",
		Short: "Record live exchanges through a reverse proxy into fixtures",
		Long: `Run a reverse proxy on --listen that forwards every request to --upstream and
relays each response as it arrives: every chunk read from the upstream is
written and flushed to the client at once, so an SSE event reaches the
client before the upstream sends the next one. The request path goes
upstream exactly as sent (%2F stays escaped). Each finished exchange is
written to --out as a redacted fixture (docs/fixtures.md), atomically,
after the client's response has ended, as
TIME-SEQ-RANDOM-METHOD-PATH.fixture: never over an existing file, so
several recorders may share --out. At most 1,024 finished exchanges wait
for their fixture; past that the recorder slows down (the next response's
end waits for room) rather than drop an exchange or grow without bound
(docs/limits.md).

Stop with Ctrl-C (SIGINT) or SIGTERM: every finished exchange is kept; exchanges in
flight get up to 2 s to finish and are otherwise dropped, and no partial
file is left behind. Then the fixtures written are listed on stdout, one
per line (-o json or yaml: {"written": [...]}, as fixture import), and
their count on stderr. When any finished exchange could not be written
(a full disk, --out removed) the summary says how many and abctl exits 3.
The proxy asks the upstream for uncompressed bodies.`,
		Example: "  abctl record --upstream https://api.openai.com --listen 127.0.0.1:8089 --out fixtures/new\n  OPENAI_BASE_URL=http://127.0.0.1:8089/v1 my-agent",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecord(cmd.Context(), o, r)
		},
	}
	f := c.Flags()
	f.StringVar(&r.upstream, "upstream", "", "upstream base URL, such as https://api.example.com")
	f.StringVar(&r.listen, "listen", "127.0.0.1:8089", "address to listen on")
	f.StringVar(&r.out, "out", "", "directory for the fixtures")
	serverLimitFlags(f, &r.limits)
	return c
}

func runRecord(ctx context.Context, o *globalOpts, r *recordOpts) error {
	if r.upstream == "" || r.listen == "" || r.out == "" {
		return usageErr(errors.New("--upstream, --listen and --out are all required"))
	}
	format, err := o.format()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return readErr(err)
	}
	log := slog.New(slog.NewTextHandler(o.app.Err, nil))
	p, err := record.New(r.upstream, r.out, log)
	if err != nil {
		return usageErr(err)
	}
	ln, err := net.Listen("tcp", r.listen)
	if err != nil {
		return readErr(fmt.Errorf("listen %s: %w", r.listen, err))
	}
	return serveRecord(ctx, o, format, p, r.limits, ln)
}

// serveRecord serves p on ln until ctx ends (SIGINT), then drains and
// prints the fixtures written (stdout, in the output format; the count
// goes to stderr).
func serveRecord(ctx context.Context, o *globalOpts, format string, p *record.Proxy, lim netlimit.Limits, ln net.Listener) error {
	srv := lim.Server(p)
	fmt.Fprintf(o.app.Err, "recording on http://%s; Ctrl-C to stop\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lim.Listener(ln)) }()
	select {
	case err := <-errc:
		return readErr(fmt.Errorf("serve: %w", err))
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// In-flight exchanges overran the grace period: cut them; they are
		// not written.
		_ = srv.Close()
	}
	// Close does not wait for handlers; wait so that none is mid-write
	// when abctl exits (a fixture is written to a temporary file and
	// renamed, and an exit between the two would leave the temporary).
	p.Wait()
	lost := p.Lost()
	if lost > 0 {
		fmt.Fprintf(o.app.Err, "stopped: %d exchange(s) recorded, %d NOT recorded (write errors, logged above: is --out full or gone?)\n", len(p.Written()), lost)
	} else {
		fmt.Fprintf(o.app.Err, "stopped: %d exchange(s) recorded\n", len(p.Written()))
	}
	if err := writeOut(printWritten(o, format, nonNil(p.Written()))); err != nil {
		return err
	}
	if lost > 0 {
		// Exit 3 also after the Ctrl-C that stopped the recorder.
		return &ExitError{Code: ExitRead, Err: fmt.Errorf("%d finished exchange(s) could not be written to %s", lost, p.Dir()), Stands: true}
	}
	return nil
}
