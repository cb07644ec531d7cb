package faults

import (
	"context"
	"slices"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/abkit/abkit/internal/refruntime"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk/runtimekit"
)

// A faulty runtime is abkit's reference runtime (internal/refruntime)
// behind a faulty adapter: the fault is where an adapter's or a runtime's
// bug sits, in what it hands the runtime (the scenario: chain, config,
// policies), what a hook observes and what the runtime makes of a hook's
// answer (each probe call and its reply), or what it reports (the run).
// None is one of refruntime.Bugs.

// RuntimeFault is a faulty runtime.
type RuntimeFault struct {
	Fault
	// In changes the scenario before the runtime gets it.
	pipeIn func(*abkitv1.PipelineScenario)
	dIn    func(*abkitv1.InterceptScenario)
	hIn    func(*abkitv1.HookScenario)
	// Call changes a hook call before the probe sees it (what the hook
	// observes); skip makes the runtime not call the hook at all (its
	// reply is an empty continue). Reply changes the probe's answer
	// before the runtime reads it. Both see the scenario's state.
	call  func(st *callState, pc *abkitv1.ProbeCall) (skip bool)
	reply func(st *callState, pc *abkitv1.ProbeCall, r *abkitv1.ProbeReply)
	// Reorder holds calls back: it returns the calls to make now, in
	// order (pc among them or not); a call held gets an empty continue
	// and is made later, when reorder returns it with another. Calls
	// still held when the scenario's run returns are made then.
	reorder func(st *callState, pc *abkitv1.ProbeCall) []*abkitv1.ProbeCall
	// Out changes what the runtime reports; pipeOutSt sees the
	// scenario's state too.
	pipeOut   func(sc *abkitv1.PipelineScenario, run *abkitv1.PipelineRun)
	pipeOutSt func(st *callState, run *abkitv1.PipelineRun)
	dOut      func(sc *abkitv1.InterceptScenario, st *callState, run *abkitv1.InterceptRun)
	hOut      func(sc *abkitv1.HookScenario, run *abkitv1.HookRun)
}

// callState is what a fault remembers across one scenario's calls.
type callState struct {
	mu        sync.Mutex
	pipe      *abkitv1.PipelineScenario
	state     map[uint32]string               // last state a probe set, by probe
	panicked  map[uint32]bool                 // exchanges whose finisher panicked
	cancelled map[uint32]bool                 // exchanges the client cancelled
	reasons   []string                        // raw reasons of replies
	finishers map[uint32]int                  // exchange: OnRequest calls made to finishing plugins
	held      map[uint32][]*abkitv1.ProbeCall // exchange: calls reorder holds back
	leaked    map[uint32][]byte               // exchange: last undeclared request write
}

// Runtimes lists the faulty runtimes, sorted by name.
func Runtimes() []RuntimeFault { return sorted(runtimeFaults()) }

// RuntimeByName returns the faulty runtime called name.
func RuntimeByName(name string) (RuntimeFault, bool) { return byName(runtimeFaults(), name) }

func rf(name, rule, story string) RuntimeFault {
	return RuntimeFault{Fault: Fault{Name: name, Rule: rule, Story: story}}
}

func specOf(sc *abkitv1.PipelineScenario, probe uint32) *abkitv1.ProbeSpec {
	if sc == nil {
		return nil
	}
	for _, p := range sc.GetPlugins() {
		if p.GetProbe() == probe {
			return p
		}
	}
	return nil
}

func exchangeOf(sc *abkitv1.PipelineScenario, i uint32) *abkitv1.ExchangeSpec {
	if sc == nil || int(i) >= len(sc.GetExchanges()) {
		return nil
	}
	return sc.GetExchanges()[i]
}

func dropBuildErrors(rule string) func(*abkitv1.PipelineScenario, *abkitv1.PipelineRun) {
	return func(_ *abkitv1.PipelineScenario, run *abkitv1.PipelineRun) {
		run.BuildErrors = slices.DeleteFunc(run.BuildErrors, func(e *abkitv1.BuildError) bool { return e.GetRule() == rule })
	}
}

// ControlName names the control runtime: the reference behind the
// faulty adapter with no fault (every call and reply passes through the
// probe wrapper unchanged). It must pass the runtime suite, or the
// corpus's kills could be the harness's.
const ControlName = "control"

func runtimeFaults() []RuntimeFault {
	fs := []RuntimeFault{{Fault: Fault{Name: ControlName}, call: func(*callState, *abkitv1.ProbeCall) bool { return false }}}
	for _, g := range [][]RuntimeFault{pChainFaults(), pExchangeFaults(), pFinishFaults(), dBuildFaults(), dDecisionFaults(), dWarningFaults(), hFaults()} {
		fs = append(fs, g...)
	}
	return fs
}

// runtimeFaultList collects a group of faults; add sets one up.
type runtimeFaultList []RuntimeFault

func (l *runtimeFaultList) add(f RuntimeFault, set func(*RuntimeFault)) { set(&f); *l = append(*l, f) }

// Serve runs the faulty runtime rf (it does not return).
func (f RuntimeFault) Serve() {
	rt := refruntime.Runtime(refruntime.Options{Name: "faulty-" + f.Name})
	inner := rt
	rt.Pipeline = func(ctx context.Context, sc runtimekit.PipelineScenario) (*abkitv1.PipelineRun, error) {
		s := changed(sc.PipelineScenario, f.pipeIn)
		st := newState(s)
		run, err := inner.Pipeline(ctx, runtimekit.PipelineScenario{PipelineScenario: s, Probes: f.wrap(sc.Probes, st)})
		if f.reorder != nil {
			faultyProbes{inner: sc.Probes, f: f, st: st}.release()
		}
		if err == nil && run != nil && f.pipeOut != nil {
			f.pipeOut(sc.PipelineScenario, run)
		}
		if err == nil && run != nil && f.pipeOutSt != nil {
			f.pipeOutSt(st, run)
		}
		return run, err
	}
	rt.Intercept = func(ctx context.Context, sc runtimekit.InterceptScenario) (*abkitv1.InterceptRun, error) {
		s := changed(sc.InterceptScenario, f.dIn)
		st := newState(nil)
		run, err := inner.Intercept(ctx, runtimekit.InterceptScenario{InterceptScenario: s, Probes: f.wrap(sc.Probes, st)})
		if err == nil && run != nil && f.dOut != nil {
			f.dOut(sc.InterceptScenario, st, run)
		}
		return run, err
	}
	rt.Hooks = func(ctx context.Context, sc runtimekit.HookScenario) (*abkitv1.HookRun, error) {
		s := changed(sc.HookScenario, f.hIn)
		run, err := inner.Hooks(ctx, runtimekit.HookScenario{HookScenario: s, Probes: f.wrap(sc.Probes, newState(nil))})
		if err == nil && run != nil && f.hOut != nil {
			f.hOut(sc.HookScenario, run)
		}
		return run, err
	}
	runtimekit.Serve(rt)
}

// changed returns a copy of sc that in, the fault's change to what the
// runtime is given, if it has one, has changed; the suite's own scenario
// stays as it was.
func changed[S proto.Message](sc S, in func(S)) S {
	s := proto.Clone(sc).(S)
	if in != nil {
		in(s)
	}
	return s
}

func newState(sc *abkitv1.PipelineScenario) *callState {
	return &callState{pipe: sc, state: map[uint32]string{}, panicked: map[uint32]bool{}, cancelled: map[uint32]bool{}, finishers: map[uint32]int{}, held: map[uint32][]*abkitv1.ProbeCall{}, leaked: map[uint32][]byte{}}
}

// wrap puts the fault's call and reply changes around the probes.
func (f RuntimeFault) wrap(p *runtimekit.Probes, st *callState) *runtimekit.Probes {
	if f.call == nil && f.reply == nil && f.reorder == nil {
		return p
	}
	return runtimekit.NewProbes(faultyProbes{inner: p, f: f, st: st})
}

type faultyProbes struct {
	inner *runtimekit.Probes
	f     RuntimeFault
	st    *callState
}

// Call forwards one hook call. The runtime's Probes.Call has filled what
// the hook observed of its context (done, deadline); the inner Call fills
// them again from the context it is given, so that context reproduces
// them: cancelled when the hook's was, without a deadline so the one
// recorded stays.
func (fp faultyProbes) Call(_ context.Context, pc *abkitv1.ProbeCall, _ ...grpc.CallOption) (*abkitv1.ProbeReply, error) {
	if fp.f.call != nil && fp.f.call(fp.st, pc) {
		return &abkitv1.ProbeReply{}, nil
	}
	if fp.f.reorder == nil {
		return fp.forward(pc), nil
	}
	r := &abkitv1.ProbeReply{}
	for _, c := range fp.f.reorder(fp.st, pc) {
		if got := fp.forward(c); c == pc {
			r = got
		}
	}
	return r, nil
}

// release makes the calls reorder still holds, exchange by exchange.
func (fp faultyProbes) release() {
	fp.st.mu.Lock()
	var left []*abkitv1.ProbeCall
	for x := uint32(0); len(fp.st.held) > 0; x++ {
		left = append(left, fp.st.held[x]...)
		delete(fp.st.held, x)
	}
	fp.st.mu.Unlock()
	for _, c := range left {
		fp.forward(c)
	}
}

// forward makes one call on the runtime's probes.
func (fp faultyProbes) forward(pc *abkitv1.ProbeCall) *abkitv1.ProbeReply {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if pc.GetCtxDone() {
		cancel()
	}
	r := fp.inner.Call(ctx, pc).ProbeReply
	if fp.f.reply != nil {
		fp.f.reply(fp.st, pc, r)
	}
	return r
}
