package gateway

import "context"

//go:generate go run gen_compose.go

// Optional holds a plugin's optional behaviours as functions, for a plugin
// whose behaviours are known only at run time: an adapter wrapping a
// foreign plugin interface, or a host's stand-in for a plugin in another
// process. A nil field is a behaviour the plugin does not have.
type Optional struct {
	Init     func(ctx context.Context) error                                         // Initializer (P12)
	Shutdown func(ctx context.Context) error                                         // Shutdowner (P13)
	Finish   func(ctx context.Context, ex *Exchange) error                           // Finisher (P26–P30)
	Frame    func(ctx context.Context, ex *Exchange, frame []byte, last bool) Action // StreamingResponder (P19–P25)
	Ready    func(ctx context.Context) error                                         // Readier (P14)
}

// mask is the bit set of the behaviours o has, in gen_compose.go's order.
func (o Optional) mask() int {
	m := 0
	for i, set := range [...]bool{o.Init != nil, o.Shutdown != nil, o.Finish != nil, o.Frame != nil, o.Ready != nil} {
		if set {
			m |= 1 << i
		}
	}
	return m
}

// Compose returns a Plugin that is base (its Name, Capabilities,
// OnRequest and OnResponse) and implements exactly the optional behaviours
// set in o: [Initializer] when o.Init is set, [StreamingResponder] when
// o.Frame is, and so on. A host finds behaviours by type assertion, so this
// is how a plugin chooses them at run time without a type per combination.
// Behaviours base itself implements are not carried over unless o names
// them: pass [OptionalOf](base), or fields of it, to keep them.
//
// The result also has a method Base() Plugin returning base, for a caller
// that needs the wrapped value back.
func Compose(base Plugin, o Optional) Plugin {
	return compose(base, o)
}

// OptionalOf returns the optional behaviours p implements, as method
// values: Compose(base, OptionalOf(p)) has the same behaviours as p.
func OptionalOf(p Plugin) Optional {
	var o Optional
	if x, ok := p.(Initializer); ok {
		o.Init = x.Init
	}
	if x, ok := p.(Shutdowner); ok {
		o.Shutdown = x.Shutdown
	}
	if x, ok := p.(Finisher); ok {
		o.Finish = x.OnFinish
	}
	if x, ok := p.(StreamingResponder); ok {
		o.Frame = x.OnResponseFrame
	}
	if x, ok := p.(Readier); ok {
		o.Ready = x.Ready
	}
	return o
}

// The mixins compose_gen.go combines; each adds one behaviour.

type optInit func(ctx context.Context) error

func (f optInit) Init(ctx context.Context) error { return f(ctx) }

type optShutdown func(ctx context.Context) error

func (f optShutdown) Shutdown(ctx context.Context) error { return f(ctx) }

type optFinish func(ctx context.Context, ex *Exchange) error

func (f optFinish) OnFinish(ctx context.Context, ex *Exchange) error { return f(ctx, ex) }

type optFrame func(ctx context.Context, ex *Exchange, frame []byte, last bool) Action

func (f optFrame) OnResponseFrame(ctx context.Context, ex *Exchange, frame []byte, last bool) Action {
	return f(ctx, ex, frame, last)
}

type optReady func(ctx context.Context) error

func (f optReady) Ready(ctx context.Context) error { return f(ctx) }
