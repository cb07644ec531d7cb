package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
	"github.com/google/go-cmp/cmp"
)

// The contract rules say how any plugin must behave; they cannot say what
// this plugin is for (which tools an allowlist refuses, what a redactor
// removes, when a limiter says 429). A plugin author states that with
// examples: inputs in a YAML file, the plugin's observed answers in a
// golden JSON file beside it, written by `conformance run --examples FILE
// --update-examples` and reviewed like any golden file. The suite then runs
// each example as a case (ID "examples/NAME") against the plugin under test,
// across the same process boundary as every other case, so a change in
// behaviour shows up next to the contract findings. docs/conformance.md
// describes the format.

// ExamplesFile is a parsed examples file.
type ExamplesFile struct {
	// Path is the file; Golden is the golden file beside it.
	Path, Golden string
	Examples     []Example `json:"examples"`
}

// Example is one scenario: a fresh instance of the plugin, then its steps
// in order on that instance (state carries from step to step).
type Example struct {
	Name string `json:"name"`
	// Config is the chain entry's config block (family P).
	Config any `json:"config,omitempty"`
	// Mask lists regular expressions; what they match in an observation
	// (its compact JSON form, and each stderr line as written) is replaced
	// by "<masked>" before it is compared or recorded (times, generated IDs).
	Mask []string `json:"mask,omitempty"`
	// Stderr adds a last observation: the lines the plugin wrote to its
	// standard error (go-plugin's own log lines left out), read after the
	// example's own plugin process has exited, so nothing is cut off. The
	// example runs on a process of its own. In-process the plugin's stderr
	// is the test's, so that observation is checked against binaries only.
	Stderr bool   `json:"stderr,omitempty"`
	Steps  []Step `json:"steps"`

	masks []*regexp.Regexp
}

// Step is one input. Exactly one of Request (family P, with Response),
// Call or Notify (family D), Submit, Part or Tool (family H) is set.
type Step struct {
	Request  *ExampleRequest  `json:"request,omitempty"`
	Response *ExampleResponse `json:"response,omitempty"`
	// Fixture is a recorded exchange (an abctl fixture file, relative to
	// the examples file) that gives both the request and the response, the
	// streamed body in its recorded chunks.
	Fixture string `json:"fixture,omitempty"`
	// Extensions are set on the exchange before the plugin's OnRequest,
	// by stand-ins of the plugins it requires (what a parser upstream in
	// the chain would have found).
	Extensions map[string]any `json:"extensions,omitempty"`
	// DenyAfter, when set, is the status with which a plugin after this
	// one in the chain rejects the request (the plugin then sees a
	// denial it did not make, P26).
	DenyAfter int `json:"deny_after,omitempty"`
	// Open starts the exchange and runs the request hooks only, leaving
	// it in flight under this name until a later step closes it; Close
	// names an open exchange to finish (its upstream answers Response).
	Open   string       `json:"open,omitempty"`
	Close  string       `json:"close,omitempty"`
	Call   *ExampleCall `json:"call,omitempty"`
	Notify *ExampleCall `json:"notify,omitempty"`
	Submit any          `json:"submit,omitempty"`
	Part   *ExamplePart `json:"part,omitempty"`
	Tool   any          `json:"tool,omitempty"`

	fx *fixture.Fixture
}

// ExampleRequest is the client's request.
type ExampleRequest struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// ExampleResponse is the upstream's answer. Events are SSE events (each
// written as given, followed by a blank line) and make it a stream; Chunk
// cuts the streamed body into reads of that many bytes (0: one read).
type ExampleResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Events  []string          `json:"events,omitempty"`
	Chunk   int               `json:"chunk,omitempty"`
}

// ExampleCall is a family D call or notification.
type ExampleCall struct {
	Point   string `json:"point"`
	Payload any    `json:"payload"`
}

// ExamplePart is a family H part: Kind is request_part or response_part.
type ExamplePart struct {
	Kind string `json:"kind"`
	Part any    `json:"part"`
}

// LoadExamples reads and checks an examples file.
func LoadExamples(path string) (*ExamplesFile, error) {
	data, err := limits.ReadFile(path, "examples file size", limits.ChainFile, "split the examples into several files")
	if err != nil {
		return nil, fmt.Errorf("examples %s: %w", path, err)
	}
	f := &ExamplesFile{Path: path, Golden: GoldenExamplesPath(path)}
	if err := catalog.DecodeStrict(path, data, f); err != nil {
		return nil, fmt.Errorf("examples: %w", err)
	}
	if len(f.Examples) == 0 {
		return nil, fmt.Errorf("examples %s: no examples (want a top-level examples: list)", path)
	}
	seen := map[string]bool{}
	for i, ex := range f.Examples {
		where := fmt.Sprintf("examples %s: example %d", path, i+1)
		if ex.Name == "" || strings.ContainsAny(ex.Name, "/ \t\n") {
			return nil, fmt.Errorf("%s: name %q: want a non-empty name without spaces or slashes (it is part of the case ID)", where, ex.Name)
		}
		if seen[ex.Name] {
			return nil, fmt.Errorf("%s: name %q is used twice", where, ex.Name)
		}
		seen[ex.Name] = true
		if len(ex.Steps) == 0 {
			return nil, fmt.Errorf("%s (%s): no steps", where, ex.Name)
		}
		for _, m := range ex.Mask {
			re, err := regexp.Compile(m)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): mask %q: %w", where, ex.Name, m, err)
			}
			f.Examples[i].masks = append(f.Examples[i].masks, re)
		}
		open := map[string]bool{}
		for j := range ex.Steps {
			st := &f.Examples[i].Steps[j]
			if st.Fixture != "" {
				if st.Request != nil || st.Response != nil || st.Open != "" || st.Close != "" {
					return nil, fmt.Errorf("%s (%s), step %d: a fixture step gives request and response itself: drop request, response, open and close", where, ex.Name, j+1)
				}
				fp := st.Fixture
				if !filepath.IsAbs(fp) {
					fp = filepath.Join(filepath.Dir(path), fp)
				}
				fx, err := fixture.ReadFile(fp)
				if err != nil {
					return nil, fmt.Errorf("%s (%s), step %d: %w", where, ex.Name, j+1, err)
				}
				st.fx = fx
				st.Request = &ExampleRequest{Method: fx.Request.Method, URL: fx.Request.URL}
				st.Response = &ExampleResponse{Status: fx.Response.Status}
			}
			if err := st.check(open); err != nil {
				return nil, fmt.Errorf("%s (%s), step %d: %w", where, ex.Name, j+1, err)
			}
		}
		for name := range open {
			return nil, fmt.Errorf("%s (%s): exchange %q is opened and never closed", where, ex.Name, name)
		}
	}
	return f, nil
}

// GoldenExamplesPath is where the observed answers of the examples in path
// are kept: NAME.golden.json beside NAME.yaml.
func GoldenExamplesPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".golden.json"
}

func (s *Step) check(open map[string]bool) error {
	if s.Close != "" {
		if !open[s.Close] {
			return fmt.Errorf("close %q: no exchange of that name is open", s.Close)
		}
		delete(open, s.Close)
		if s.Request != nil || s.Response == nil {
			return errors.New("a close step gives the response of the open exchange, and no request")
		}
		if s.Response.Status < 100 || s.Response.Status > 599 {
			return fmt.Errorf("response: status %d is not an HTTP status", s.Response.Status)
		}
		return nil
	}
	if s.Open != "" {
		if open[s.Open] {
			return fmt.Errorf("open %q: an exchange of that name is already open", s.Open)
		}
		if s.Request == nil || s.Response != nil {
			return errors.New("an open step gives a request and no response (the close step gives it)")
		}
		open[s.Open] = true
		return nil
	}
	n := 0
	for _, set := range []bool{s.Request != nil, s.Call != nil, s.Notify != nil, s.Submit != nil, s.Part != nil, s.Tool != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("want exactly one of request (with response), call, notify, submit, part, tool")
	}
	if (s.Response != nil || s.Extensions != nil || s.DenyAfter != 0) && s.Request == nil {
		return errors.New("response, extensions and deny_after belong to a request step")
	}
	if s.DenyAfter != 0 && (s.DenyAfter < 400 || s.DenyAfter > 599) {
		return fmt.Errorf("deny_after %d: want a 4xx or 5xx status", s.DenyAfter)
	}
	if s.Request != nil {
		if s.Request.Method == "" || s.Request.URL == "" {
			return errors.New("request: want method and url")
		}
		if s.Response == nil {
			return errors.New("request: want a response (what the upstream answers if the request gets through)")
		}
		if s.Response.Status < 100 || s.Response.Status > 599 {
			return fmt.Errorf("response: status %d is not an HTTP status", s.Response.Status)
		}
		if s.Response.Body != "" && len(s.Response.Events) > 0 {
			return errors.New("response: give body or events, not both")
		}
	}
	for _, c := range []*ExampleCall{s.Call, s.Notify} {
		if c != nil && !intercept.Point(c.Point).Valid() {
			return fmt.Errorf("point %q is not an intercept point", c.Point)
		}
	}
	if s.Part != nil && s.Part.Kind != string(hooks.KindRequestPart) && s.Part.Kind != string(hooks.KindResponsePart) {
		return fmt.Errorf("part: kind %q: want %s or %s", s.Part.Kind, hooks.KindRequestPart, hooks.KindResponsePart)
	}
	return nil
}

// goldenExamples is the golden file: every example's observed steps.
type goldenExamples struct {
	Examples []goldenExample `json:"examples"`
}

type goldenExample struct {
	Name  string            `json:"name"`
	Steps []json.RawMessage `json:"steps"`
}

// readGolden returns the golden steps by example name; a missing file is
// an empty map (every example then fails with the command to write it).
func (f *ExamplesFile) readGolden() (map[string][]json.RawMessage, error) {
	data, err := os.ReadFile(f.Golden)
	if errors.Is(err, os.ErrNotExist) {
		return map[string][]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, err
	}
	var g goldenExamples
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("golden %s: %w", f.Golden, err)
	}
	out := map[string][]json.RawMessage{}
	for _, e := range g.Examples {
		out[e.Name] = e.Steps
	}
	return out, nil
}

// ExampleCases returns one case per example. Each runs its example and
// compares what it observed with the golden file; with update it records
// the observation instead (see [WriteExamplesGolden]).
func ExampleCases(f *ExamplesFile, update bool, observed func(name string, steps []json.RawMessage)) ([]*Case, error) {
	golden, err := f.readGolden()
	if err != nil {
		return nil, fmt.Errorf("examples %s: %w", f.Path, err)
	}
	var out []*Case
	for _, ex := range f.Examples {
		ex := ex
		want, have := golden[ex.Name]
		out = append(out, &Case{
			ID:      "examples/" + ex.Name,
			Rules:   []string{"EX"},
			Summary: fmt.Sprintf("behaves as example %q of %s says", ex.Name, filepath.Base(f.Path)),
			Explain: "The plugin's own examples (--examples FILE): each step's input goes to a fresh instance of the plugin, " +
				"in order, and what the plugin answered (actions, bodies, extensions, decisions) must equal the golden file " +
				"beside the examples. A failure is a change of behaviour: fix the plugin, or, when the change is intended, " +
				"rewrite the golden file with --update-examples and review its diff.",
			Applies:      func(d *Reported) string { return ex.applies(d) },
			FreshProcess: ex.Stderr,
			Run: func(t *T) {
				sub := t.Subject()
				if ex.Stderr {
					var err error
					if sub, err = t.Launch(); err != nil {
						t.Fatalf("EX", "a process of the example's own could not be started: %v", err)
					}
				}
				got := ex.run(t, sub)
				if t.Failed() {
					return
				}
				if update {
					observed(ex.Name, got)
					return
				}
				if !have {
					t.Errorf("EX", "%s has no entry for example %q; record it with: conformance run --plugin BIN --examples %s --update-examples", f.Golden, ex.Name, f.Path)
					return
				}
				if _, inproc := sub.(*inProcSubject); inproc && ex.Stderr && len(want) > 0 && len(got) > 0 {
					t.Logf("in-process: the plugin's stderr is the test's own; its last step (stderr) is checked against the binary only")
					want, got = want[:len(want)-1], got[:len(got)-1]
				}
				compareSteps(t, f.Golden, want, got)
			},
		})
	}
	return out, nil
}

func compareSteps(t *T, golden string, want, got []json.RawMessage) {
	if len(want) != len(got) {
		t.Errorf("EX", "%s has %d steps for this example, the examples file %d; rewrite it with --update-examples", golden, len(want), len(got))
		return
	}
	for i := range want {
		var w, g any
		if err := json.Unmarshal(want[i], &w); err != nil {
			t.Errorf("EX", "%s: step %d: %v", golden, i+1, err)
			continue
		}
		_ = json.Unmarshal(got[i], &g)
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("EX", "step %d: the plugin answered differently from %s (-golden +observed):\n%s", i+1, golden, d)
		}
	}
}

// WriteExamplesGolden writes the observed steps of every example to the
// golden file, in the examples file's order, atomically.
func WriteExamplesGolden(f *ExamplesFile, observed map[string][]json.RawMessage) error {
	var b bytes.Buffer
	b.WriteString("{\n  \"examples\": [")
	first := true
	for _, ex := range f.Examples {
		steps, ok := observed[ex.Name]
		if !ok {
			return fmt.Errorf("example %q was not observed (it failed or was skipped); the golden file is unchanged", ex.Name)
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		name, _ := json.Marshal(ex.Name)
		fmt.Fprintf(&b, "\n    {\"name\": %s, \"steps\": [", name)
		for i, s := range steps {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n      ")
			b.Write(s)
		}
		b.WriteString("\n    ]}")
	}
	b.WriteString("\n  ]\n}\n")
	tmp, err := os.CreateTemp(filepath.Dir(f.Golden), ".golden-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Golden)
}

func (ex *Example) applies(d *Reported) string {
	for _, st := range ex.Steps {
		switch {
		case st.Request != nil && !d.Has(family.Pipeline):
			return "example has request steps but the plugin serves no family P pipeline"
		case (st.Call != nil || st.Notify != nil) && !d.Has(family.Dispatch):
			return "example has call/notify steps but the plugin serves no family D extension"
		case (st.Submit != nil || st.Part != nil || st.Tool != nil) && !d.Has(family.Hooks):
			return "example has submit/part/tool steps but the plugin serves no family H hooks"
		}
	}
	return ""
}

// run drives the example's steps and returns what each observed, as
// compact JSON.
func (ex *Example) run(t *T, sub Subject) []json.RawMessage {
	p := sub.Plugin()
	var (
		chain *pipeline.Chain
		cur   = &current{step: &Step{}}
		ext   intercept.Extension
		open  = map[string]*inflight{}
	)
	var out []json.RawMessage
	for i := range ex.Steps {
		st := &ex.Steps[i]
		var obs any
		switch {
		case st.Close != "":
			fl := open[st.Close]
			delete(open, st.Close)
			obs = fl.end(t, st.Response)
		case st.Request != nil:
			if chain == nil {
				var err error
				if chain, err = ex.chain(t, sub, cur); err != nil {
					t.Errorf("EX", "step %d: %v", i+1, err)
					return nil
				}
				defer func() {
					if chain != nil {
						chain.Stop(context.WithoutCancel(t.Context()))
					}
				}()
			}
			cur.step, cur.saw = st, nil
			fl := begin(t, chain, p.Pipeline.Name, st)
			fl.saw = cur.saw
			if st.Open != "" {
				open[st.Open] = fl
				obs = fl.observe(nil)
				break
			}
			obs = fl.end(t, st.Response)
		case st.Call != nil || st.Notify != nil:
			if ext == nil {
				var err error
				if ext, err = p.Extension.New(); err != nil {
					t.Errorf("EX", "step %d: the extension could not be made: %v", i+1, err)
					return nil
				}
			}
			obs = runCall(t, ext, st)
		default:
			obs = runHookSet(t, sub, st)
		}
		b, err := json.Marshal(obs)
		if err != nil {
			t.Errorf("EX", "step %d: %v", i+1, err)
			return nil
		}
		out = append(out, ex.mask(b))
	}
	if ex.Stderr {
		if chain != nil {
			chain.Stop(context.WithoutCancel(t.Context()))
			chain = nil
		}
		if err := sub.Close(); err != nil {
			t.Logf("close the example's plugin process: %v", err)
		}
		all := strings.Split(sub.Stderr(), "\n")
		if ls, ok := sub.(interface{ StderrLines() []string }); ok {
			all = ls.StderrLines() // reports quote only the tail
		}
		lines := []string{}
		for _, l := range all {
			if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, `"@level"`) {
				lines = append(lines, string(ex.mask([]byte(l)))) // masks see the line as written
			}
		}
		b, _ := json.Marshal(map[string][]string{"stderr": lines})
		out = append(out, ex.mask(b))
	}
	return out
}

func (ex *Example) mask(b []byte) []byte {
	for _, re := range ex.masks {
		b = re.ReplaceAll(b, []byte("<masked>"))
	}
	return b
}

// chain builds the example's one-plugin chain; the plugins it requires are
// stand-ins that set the current step's extensions.
func (ex *Example) chain(t *T, sub Subject, cur *current) (*pipeline.Chain, error) {
	f := sub.Plugin().Pipeline
	var cfg json.RawMessage
	if ex.Config != nil {
		b, err := json.Marshal(ex.Config)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		cfg = b
	}
	// An earlier plugin sets the step's extensions even when the plugin
	// requires none (a plugin may read what it does not require).
	spec := pipeline.Spec{Direction: gateway.Inbound, Entries: []pipeline.Entry{{Plugin: earlierName}}}
	factories := []gateway.Factory{*f, seeder(earlierName, cur)}
	caps := sub.Describe().Pipeline.Capabilities
	deps := append(append([]string(nil), caps.Requires...), caps.RequiresAny...)
	for _, dep := range deps {
		if dep == "" || dep == f.Name || slices.Contains(specNames(spec), dep) {
			continue
		}
		spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: dep})
		factories = append(factories, seeder(dep, cur))
	}
	spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: f.Name, Config: cfg})
	spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: denierName})
	factories = append(factories, gateway.Factory{Name: denierName, New: func(json.RawMessage) (gateway.Plugin, error) { return denier{cur}, nil }})
	ch, err := pipeline.Build(spec, factories, pipeline.Options{FinishTimeout: otherFinishTimeout})
	if err != nil {
		return nil, fmt.Errorf("the chain of the plugin with this example's config could not be built: %w", err)
	}
	if err := ch.Start(t.Context()); err != nil {
		return nil, fmt.Errorf("the chain did not start: %w", err)
	}
	return ch, nil
}

// seeder stands in for a required plugin and sets the step's extensions.
func seeder(name string, cur *current) gateway.Factory {
	return gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return seedPlugin{name, cur}, nil }}
}

type seedPlugin struct {
	name string
	cur  *current
}

func (s seedPlugin) Name() string { return s.name }
func (seedPlugin) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Conformance stand-in that sets an example's extensions"}
}
func (s seedPlugin) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	for k, v := range s.cur.step.Extensions {
		ex.SetExtension(k, v)
	}
	return gateway.Continue()
}
func (seedPlugin) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// current is the step being run, which the stand-ins read, and what the
// later stand-in saw of it.
type current struct {
	step *Step
	saw  map[string]json.RawMessage
}

// earlierName is the stand-in before the plugin under test.
const earlierName = "conformance-earlier-plugin"

// denierName is the plugin after the one under test: it rejects when the
// step says deny_after, and continues otherwise.
const denierName = "conformance-later-plugin"

type denier struct{ cur *current }

func (denier) Name() string { return denierName }
func (denier) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Conformance stand-in for a later plugin that may deny"}
}
func (d denier) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	// What a later plugin reads at its OnRequest: extensions set during
	// the request phase, not only by the end of the exchange.
	for k, v := range ex.Extensions() {
		if _, seeded := d.cur.step.Extensions[k]; seeded {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			b, _ = json.Marshal(fmt.Sprintf("<not JSON: %v>", err))
		}
		if d.cur.saw == nil {
			d.cur.saw = map[string]json.RawMessage{}
		}
		d.cur.saw[k] = b
	}
	if s := d.cur.step.DenyAfter; s != 0 {
		return gateway.Reject(s, "denied by a later plugin (example deny_after)")
	}
	return gateway.Continue()
}
func (denier) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// exchangeObs is what one request step observed.
type exchangeObs struct {
	// Open is set for an open step: the request hooks ran, and the
	// exchange is still in flight.
	Open        bool                       `json:"open,omitempty"`
	Calls       []callObs                  `json:"calls"`
	Outcome     string                     `json:"outcome,omitempty"`
	DeniedBy    string                     `json:"denied_by,omitempty"`
	Status      int                        `json:"status,omitempty"`
	Body        string                     `json:"body,omitempty"`
	RequestBody *string                    `json:"request_body,omitempty"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
	// NextSaw are the extensions the next plugin in the chain read at its
	// OnRequest.
	NextSaw  map[string]json.RawMessage `json:"next_plugin_saw,omitempty"`
	Warnings []string                   `json:"warnings,omitempty"`
}

type callObs struct {
	Hook    string `json:"hook"`
	Frame   *int   `json:"frame,omitempty"`
	Last    bool   `json:"last,omitempty"`
	Action  string `json:"action"`
	Status  int    `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Mutated string `json:"mutated,omitempty"`
	Error   string `json:"error,omitempty"`
	// Headers and Rejection are the call's header changes (P32, P33) and
	// its rejection's headers and body (P34), as the trace has them
	// (redacted): for a plugin binary they came back over the protocol.
	Headers   []trace.HeaderChange `json:"headers,omitempty"`
	Rejection *trace.Rejection     `json:"rejection,omitempty"`
}

type bodyClient struct {
	status int
	body   bytes.Buffer
}

func (c *bodyClient) WriteHeader(s int, _ http.Header) { c.status = s }
func (c *bodyClient) Write(p []byte) (int, error)      { return c.body.Write(p) }
func (c *bodyClient) Flush()                           {}

// inflight is an exchange whose request hooks have run.
type inflight struct {
	ex       *pipeline.Exchange
	rec      *trace.Recorder
	client   *bodyClient
	name     string
	step     *Step
	body     []byte
	admitted bool
	res      *pipeline.Result
	saw      map[string]json.RawMessage
}

// begin starts the step's exchange and runs its request hooks.
func begin(t *T, ch *pipeline.Chain, name string, st *Step) *inflight {
	h := http.Header{}
	for k, v := range st.Request.Headers {
		h.Set(k, v)
	}
	var body []byte
	if st.Request.Body != "" {
		body = []byte(st.Request.Body)
	}
	if st.fx != nil {
		h, body = st.fx.Request.Header.Clone(), st.fx.Request.Body
	}
	fl := &inflight{rec: trace.NewRecorder(), client: &bodyClient{}, name: name, step: st, body: body}
	fl.ex = ch.NewExchange(pipeline.RequestTo(st.Request.Method, st.Request.URL, h, body),
		pipeline.ExchangeOptions{Trace: fl.rec, Client: fl.client})
	fl.admitted = fl.ex.Request(t.Context())
	return fl
}

// end answers the exchange with resp (when its request got through),
// finishes it and returns what it observed.
func (fl *inflight) end(t *T, resp *ExampleResponse) exchangeObs {
	if fl.admitted {
		up := upstream(resp)
		if fx := fl.step.fx; fx != nil {
			up = pipeline.Upstream{Status: fx.Response.Status, Header: fx.Response.Header.Clone(), Body: fx.Response.Body}
			if fx.Response.Streamed() {
				var cut [][]byte
				for _, c := range fx.Response.Chunks {
					cut = append(cut, c.Data)
				}
				up.Body, up.Stream = nil, stream(cut, false, false)
			}
		}
		fl.ex.Respond(t.Context(), up)
	}
	fl.res = fl.ex.Finish()
	for _, e := range fl.rec.Events() {
		t.rec.Add(e)
	}
	return fl.observe(fl.res)
}

func upstream(resp *ExampleResponse) pipeline.Upstream {
	rh := http.Header{}
	for k, v := range resp.Headers {
		rh.Set(k, v)
	}
	up := pipeline.Upstream{Status: resp.Status, Header: rh}
	if len(resp.Events) > 0 {
		if rh.Get("Content-Type") == "" {
			rh.Set("Content-Type", "text/event-stream")
		}
		var b []byte
		for _, e := range resp.Events {
			b = append(append(b, e...), "\n\n"...)
		}
		cut := [][]byte{b}
		if n := resp.Chunk; n > 0 {
			cut = nil
			for len(b) > n {
				cut, b = append(cut, b[:n]), b[n:]
			}
			cut = append(cut, b)
		}
		up.Stream = stream(cut, false, false)
	} else {
		up.Body = []byte(resp.Body)
	}
	return up
}

// observe is what the exchange showed so far: res is nil while it is open.
func (fl *inflight) observe(res *pipeline.Result) exchangeObs {
	obs := exchangeObs{Open: res == nil, NextSaw: fl.saw}
	if res != nil {
		obs.Outcome, obs.Status, obs.Body = res.Outcome.Kind.String(), fl.client.status, fl.client.body.String()
		if res.Outcome.DeniedBy != fl.name {
			obs.DeniedBy = res.Outcome.DeniedBy
		}
		if res.RequestBody != nil && !bytes.Equal(res.RequestBody, fl.body) {
			s := string(res.RequestBody)
			obs.RequestBody = &s
		}
		for _, w := range res.Warnings {
			obs.Warnings = append(obs.Warnings, w.String())
		}
	}
	for _, e := range fl.rec.Events() {
		if e.Plugin != fl.name {
			continue
		}
		obs.Calls = append(obs.Calls, callObs{Hook: e.Hook, Frame: e.Frame, Last: e.Last, Action: e.Action, Status: e.Status,
			Reason: e.Reason, Mutated: e.Mutated, Error: e.Error, Headers: e.Headers, Rejection: e.Rejection})
	}
	for k, v := range fl.ex.Gateway().Extensions() {
		if _, seeded := fl.step.Extensions[k]; seeded {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			b, _ = json.Marshal(fmt.Sprintf("<not JSON: %v>", err))
		}
		if obs.Extensions == nil {
			obs.Extensions = map[string]json.RawMessage{}
		}
		obs.Extensions[k] = b
	}
	return obs
}

type callAnswer struct {
	Decision    string          `json:"decision,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Replacement json.RawMessage `json:"replacement,omitempty"`
	Error       string          `json:"error,omitempty"`
}

func runCall(t *T, ext intercept.Extension, st *Step) callAnswer {
	c := st.Call
	if c == nil {
		c = st.Notify
	}
	payload, err := json.Marshal(c.Payload)
	if err != nil {
		return callAnswer{Error: "example payload: " + err.Error()}
	}
	if st.Notify != nil {
		if err := ext.Notify(intercept.Point(c.Point), payload); err != nil {
			return callAnswer{Error: err.Error()}
		}
		return callAnswer{}
	}
	a, err := ext.Call(t.Context(), intercept.Point(c.Point), payload)
	if err != nil {
		return callAnswer{Error: err.Error()}
	}
	out := callAnswer{Decision: string(a.Decision), Reason: a.Reason}
	if len(a.Replacement) > 0 {
		var v any
		if json.Unmarshal(a.Replacement, &v) == nil {
			out.Replacement, _ = json.Marshal(v) // canonical: key order and spacing do not matter
		} else {
			out.Replacement = json.RawMessage(fmt.Sprintf("%q", a.Replacement))
		}
	}
	return out
}

// hookAnswer is what one hook did with a step's input.
type hookAnswer struct {
	Hook   string `json:"hook"`
	Result any    `json:"result,omitempty"`
	Reject string `json:"reject,omitempty"`
	Error  string `json:"error,omitempty"`
}

// runHookSet gives the step's input to every hook of its kind, in the
// plugin's order, each on its own copy.
func runHookSet(t *T, sub Subject, st *Step) []hookAnswer {
	hs := sub.Plugin().Hooks
	out := []hookAnswer{}
	if hs == nil {
		return out
	}
	fail := func(id string, err error) hookAnswer {
		if reason, ok := hooks.IsReject(err); ok {
			return hookAnswer{Hook: id, Reject: reason}
		}
		return hookAnswer{Hook: id, Error: err.Error()}
	}
	ctx := t.Context()
	switch {
	case st.Submit != nil:
		raw, _ := json.Marshal(st.Submit)
		for _, h := range hs.Submit {
			var s hooks.Submit
			if err := json.Unmarshal(raw, &s); err != nil {
				return []hookAnswer{{Error: "example submit: " + err.Error()}}
			}
			if err := h.OnSubmit(ctx, &s); err != nil {
				out = append(out, fail(h.Spec().ID, err))
				continue
			}
			out = append(out, hookAnswer{Hook: h.Spec().ID, Result: &s})
		}
	case st.Part != nil:
		raw, _ := json.Marshal(st.Part.Part)
		for _, h := range hs.Parts {
			if string(h.Spec().Kind) != st.Part.Kind {
				continue
			}
			var p hooks.Part
			if err := json.Unmarshal(raw, &p); err != nil {
				return []hookAnswer{{Error: "example part: " + err.Error()}}
			}
			got, err := h.OnPart(ctx, p)
			if err != nil {
				out = append(out, fail(h.Spec().ID, err))
				continue
			}
			out = append(out, hookAnswer{Hook: h.Spec().ID, Result: got})
		}
	case st.Tool != nil:
		raw, _ := json.Marshal(st.Tool)
		for _, h := range hs.Tools {
			var ev hooks.ToolEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return []hookAnswer{{Error: "example tool event: " + err.Error()}}
			}
			d, err := h.OnTool(ctx, ev)
			if err != nil {
				out = append(out, fail(h.Spec().ID, err))
				continue
			}
			out = append(out, hookAnswer{Hook: h.Spec().ID, Result: d})
		}
	}
	return out
}
