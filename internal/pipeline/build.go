package pipeline

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/extschema"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// Options tune a chain. The zero value is ready to use.
type Options struct {
	// FinishTimeout is the deadline of the fresh context each OnFinish call
	// gets (P28). Zero means 2 s.
	FinishTimeout time.Duration
	// Grace is how long the runtime still waits for a Finisher or
	// Shutdowner after its context's deadline before abandoning it, and the
	// deadline each remaining Shutdown gets once Stop's own deadline has
	// passed (P13). Zero means 100 ms.
	Grace time.Duration
	// PoisonFrames makes the runtime hand plugins a copy of each frame in a
	// reusable scratch buffer and overwrite that buffer with PoisonByte once
	// the frame has been dispatched to every plugin, so that a plugin that
	// keeps frame bytes past the call sees garbage (P24). Conformance hosts
	// set it; it costs one copy per frame.
	PoisonFrames bool
	// Trace, when set, records Init and Shutdown calls.
	Trace *trace.Recorder
	// FramesAfterWalk gives each streaming plugin a buffered response's
	// one frame (P22) in a pass after the OnResponse walk of the others,
	// as AuthBridge's RunResponseFrame does: the other alternative of
	// choice P22.timing. By default the frame is that plugin's step of the
	// reverse response walk.
	FramesAfterWalk bool
	// KeepUndeclaredWrites keeps a body write by a plugin that does not
	// declare it in memory, as AuthBridge's Context.SetBody does: the
	// other alternative of choice P17.undeclared-write. The later plugins
	// (in process or out) see the written body, no P17 warning is given,
	// and the wire still gets only the host's body or the declared
	// writer's. By default such a write is refused and reported.
	KeepUndeclaredWrites bool
}

// PoisonByte is what PoisonFrames overwrites a dispatched frame with.
const PoisonByte = 0xDB

const (
	defaultFinishTimeout = 2 * time.Second
	defaultGrace         = 100 * time.Millisecond
)

// plug is one built chain entry with its optional behaviours resolved once,
// so the hot path makes no interface conversions.
type plug struct {
	name    string
	p       gateway.Plugin
	caps    gateway.Capabilities
	observe bool
	wReq    bool
	wResp   bool

	init   gateway.Initializer
	shut   gateway.Shutdowner
	fin    gateway.Finisher
	stream gateway.StreamingResponder
	ready  gateway.Readier
	// fail is the plugin's error-returning hooks, if it has them.
	fail FailingHooks

	// ext holds the compiled schema of each extension the plugin declares
	// it writes with one (X1); declares says it declared any extension.
	ext      map[string]*extschema.Schema
	declares bool
}

// Chain is a built, validated chain of plugin instances. It is safe for
// concurrent exchanges.
type Chain struct {
	dir     gateway.Direction
	dirName string
	mode    Mode
	plugins []plug
	// streamRev holds the indices of streaming plugins in reverse
	// declaration order (P20).
	streamRev []int
	readsBody bool // P11
	// writesResp: some plugin writes the response body, so responses are
	// buffered (P18).
	writesResp bool
	opts       Options

	mu       sync.Mutex
	started  bool
	startedN int // plugins 0..startedN-1 initialised (or without Init)
	stopped  bool

	// warnings are the findings Build reported without refusing (P5, X1,
	// X2).
	warnings []*RuleError
}

// Build validates spec (every check of P1, P2, P4–P10) and makes one
// instance per entry through its factory. It returns every error of the
// chain in one *BuildError (P6). factories are the registered plugins.
func Build(spec Spec, factories []gateway.Factory, opts Options) (*Chain, error) {
	if opts.FinishTimeout <= 0 {
		opts.FinishTimeout = defaultFinishTimeout
	}
	if opts.Grace <= 0 {
		opts.Grace = defaultGrace
	}
	byName := make(map[string]*gateway.Factory, len(factories))
	registered := make([]string, 0, len(factories))
	var errs []*RuleError
	for i := range factories {
		f := &factories[i]
		if _, dup := byName[f.Name]; dup {
			errs = append(errs, &RuleError{Plugin: f.Name, Rule: "P1", Entry: -1,
				Msg: fmt.Sprintf("two factories are registered as %q", f.Name), Fix: "register each plugin type under its own name"})
			continue
		}
		byName[f.Name] = f
		registered = append(registered, f.Name)
	}

	// Instantiate every entry that names a registered plugin and has no
	// config problem, so that Validate sees the real capabilities.
	insts := make([]gateway.Plugin, len(spec.Entries))
	infos := make(map[string]Info, len(spec.Entries))
	for i, e := range spec.Entries {
		f, ok := byName[e.Plugin]
		if !ok || e.OnError == Off {
			continue
		}
		info := Info{Name: f.Name, TakesConfig: f.Config != nil, NoCapabilities: true}
		if hasConfig(e.Config) && f.Config == nil {
			infos[e.Plugin] = info // Validate reports the config block
			continue
		}
		p, err := instantiate(f, e.Config)
		if err != nil {
			errs = append(errs, &RuleError{Plugin: e.Plugin, Rule: "P6", Entry: i, Msg: err.Error(),
				Fix: "fix the entry's config block so the plugin accepts it"})
			infos[e.Plugin] = info
			continue
		}
		caps := p.Capabilities()
		switch {
		case p.Name() != f.Name:
			errs = append(errs, &RuleError{Plugin: e.Plugin, Rule: "P2", Entry: i,
				Msg: fmt.Sprintf("factory %q made an instance named %q", f.Name, p.Name()),
				Fix: "make the plugin's Name() return its registered name"})
		case !caps.Equal(p.Capabilities()):
			errs = append(errs, &RuleError{Plugin: e.Plugin, Rule: "P2", Entry: i,
				Msg: "Capabilities() returned different values on two calls; capabilities must be static",
				Fix: "return a constant Capabilities value, or register the variant under another name"})
		}
		info.Capabilities, info.NoCapabilities = caps, false
		infos[e.Plugin] = info
		insts[i] = p
	}
	lookup := func(name string) (Info, bool) { i, ok := infos[name]; return i, ok }
	errs = append(errs, Validate(spec, func(name string) (Info, bool) {
		if i, ok := lookup(name); ok {
			return i, true
		}
		// Registered but every entry is off: still known.
		if f, ok := byName[name]; ok {
			return Info{Name: name, TakesConfig: f.Config != nil, NoCapabilities: true}, true
		}
		return Info{}, false
	}, registered)...)
	sortErrs(errs)
	if refused := Refusals(errs); len(refused) > 0 {
		return nil, errorsOf(spec.Direction, refused)
	}

	c := &Chain{dir: spec.Direction, dirName: spec.Direction.String(), mode: spec.Mode, opts: opts, warnings: errs}
	if c.mode == "" {
		c.mode = Proxy
	}
	for i, e := range spec.Entries {
		if e.OnError == Off {
			continue
		}
		p := insts[i]
		caps := p.Capabilities().Normalize()
		pl := plug{name: e.Plugin, p: p, caps: caps, observe: e.OnError == Observe,
			wReq: caps.WritesRequestBody, wResp: caps.WritesResponseBody}
		pl.init, _ = p.(gateway.Initializer)
		pl.shut, _ = p.(gateway.Shutdowner)
		pl.fin, _ = p.(gateway.Finisher)
		pl.stream, _ = p.(gateway.StreamingResponder)
		pl.ready, _ = p.(gateway.Readier)
		pl.fail = failingHooksOf(p)
		pl.ext, pl.declares = compileExtensions(e.Plugin, i, caps, &c.warnings)
		c.readsBody = c.readsBody || caps.ReadsBody
		c.writesResp = c.writesResp || caps.WritesResponseBody
		c.plugins = append(c.plugins, pl)
	}
	for i := len(c.plugins) - 1; i >= 0; i-- {
		if c.plugins[i].stream != nil {
			c.streamRev = append(c.streamRev, i)
		}
	}
	return c, nil
}

func sortErrs(errs []*RuleError) {
	// Stable by entry so each entry's errors read together; chain-wide
	// errors (-1) first.
	for i := 1; i < len(errs); i++ {
		for j := i; j > 0 && errs[j].Entry < errs[j-1].Entry; j-- {
			errs[j], errs[j-1] = errs[j-1], errs[j]
		}
	}
}

// Instantiate makes one instance of f with an entry's raw config, exactly
// as [Build] does for each chain entry: a panic, an error or a nil
// instance is an error naming the plugin ("config rejected: …" for an
// error). Tools that check a chain without running it (abctl chain
// validate) call it so that they reject what a build rejects.
func Instantiate(f *gateway.Factory, config []byte) (gateway.Plugin, error) {
	return instantiate(f, config)
}

// instantiate calls f.New, turning a panic or a nil instance into an error.
func instantiate(f *gateway.Factory, config []byte) (p gateway.Plugin, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plugin %q: factory panicked: %v", f.Name, r)
		}
	}()
	if f.New == nil {
		return nil, fmt.Errorf("plugin %q: factory has no New function", f.Name)
	}
	var raw json.RawMessage
	if hasConfig(config) {
		raw = json.RawMessage(config)
	}
	p, err = f.New(raw)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: config rejected: %w", f.Name, err)
	}
	if p == nil {
		return nil, fmt.Errorf("plugin %q: factory returned no instance", f.Name)
	}
	return p, nil
}

// Warnings returns what Build reported without refusing the chain: a
// description that breaks P5, an extension schema that does not compile, a
// reader with no writer before it (X1, X2). Hosts show them at start-up.
func (c *Chain) Warnings() []*RuleError { return c.warnings }

// Direction returns the chain's direction.
func (c *Chain) Direction() gateway.Direction { return c.dir }

// Mode returns the chain's mode.
func (c *Chain) Mode() Mode { return c.mode }

// Names returns the plugin names in declaration order, without off entries.
func (c *Chain) Names() []string {
	out := make([]string, len(c.plugins))
	for i := range c.plugins {
		out[i] = c.plugins[i].name
	}
	return out
}

// Capabilities returns the normalised capabilities of the named plugin.
func (c *Chain) Capabilities(name string) (gateway.Capabilities, bool) {
	for i := range c.plugins {
		if c.plugins[i].name == name {
			return c.plugins[i].caps.Normalize(), true
		}
	}
	return gateway.Capabilities{}, false
}

// ReadsBody reports whether some plugin reads bodies, so that the host
// buffers them (P11).
func (c *Chain) ReadsBody() bool { return c.readsBody }

// BuffersResponses reports whether some plugin writes the response body, so
// that a streamed response is buffered (P18).
func (c *Chain) BuffersResponses() bool { return c.writesResp }
