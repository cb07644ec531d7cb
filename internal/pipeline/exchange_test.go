package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

func req() Request {
	return Request{Request: gateway.Request{Method: "POST", URL: "http://svc/v1", Header: http.Header{}}, Body: []byte(`{"q":1}`)}
}

func jsonUp(body string) Upstream {
	return Upstream{Status: 200, Header: jsonHeader(), Body: []byte(body)}
}

func reject(status int, reason string) func(context.Context, *gateway.Exchange) gateway.Action {
	return func(context.Context, *gateway.Exchange) gateway.Action { return gateway.Reject(status, reason) }
}

// TestRequestAndResponseOrder covers P15, P16 and P26/P27 on the buffered
// path, table-driven over who rejects.
func TestRequestAndResponseOrderP15P16P26P27(t *testing.T) {
	tests := []struct {
		name        string
		rejectAt    string // plugin whose OnRequest rejects
		respReject  string // plugin whose OnResponse rejects
		up          Upstream
		wantCalls   string
		wantKind    gateway.OutcomeKind
		wantStatus  int
		wantDenier  string
		wantBody    string
		wantErrIs   error
		wantNoRespB bool
	}{
		{name: "P15 P16 P27 allow", up: jsonUp(`{"ok":1}`),
			wantCalls: "a.on_request b.on_request c.on_request c.on_response b.on_response a.on_response c.on_finish b.on_finish a.on_finish",
			wantKind:  gateway.OutcomeAllow, wantStatus: 200, wantBody: `{"ok":1}`},
		{name: "P15 P26 reject stops chain, denier finishes", rejectAt: "b", up: jsonUp("x"),
			wantCalls: "a.on_request b.on_request b.on_finish a.on_finish",
			wantKind:  gateway.OutcomeDeny, wantStatus: 429, wantDenier: "b", wantBody: "slow down\n"},
		{name: "P16 upstream error: no OnResponse, 502", up: Upstream{Err: errors.New("connection refused")},
			wantCalls: "a.on_request b.on_request c.on_request c.on_finish b.on_finish a.on_finish",
			wantKind:  gateway.OutcomeError, wantStatus: 502, wantBody: "Bad Gateway\n", wantErrIs: ErrUpstream},
		{name: "P16 response reject stops response chain", respReject: "b", up: jsonUp("secret"),
			wantCalls: "a.on_request b.on_request c.on_request c.on_response b.on_response c.on_finish b.on_finish a.on_finish",
			wantKind:  gateway.OutcomeDeny, wantStatus: 429, wantDenier: "b", wantBody: "slow down\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recLog{}
			var fs []*fake
			for _, n := range []string{"a", "b", "c"} {
				f := &fake{name: n, log: log, finish: true}
				if n == tt.rejectAt {
					f.req = reject(429, "slow down")
				}
				if n == tt.respReject {
					f.resp = reject(429, "slow down")
				}
				fs = append(fs, f)
			}
			c := buildFakes(t, Options{}, fs...)
			cl := &BufferClient{}
			res := c.Run(context.Background(), req(), tt.up, ExchangeOptions{Client: cl})
			if got := strings.Join(log.seq(), " "); got != tt.wantCalls {
				t.Errorf("calls\n got %s\nwant %s", got, tt.wantCalls)
			}
			o := res.Outcome
			if o.Kind != tt.wantKind || o.Status != tt.wantStatus || o.DeniedBy != tt.wantDenier {
				t.Errorf("outcome %+v", o)
			}
			if cl.Status != tt.wantStatus || cl.Body.String() != tt.wantBody || string(res.Body) != tt.wantBody || res.Status != tt.wantStatus {
				t.Errorf("client got %d %q, result %d %q", cl.Status, cl.Body.String(), res.Status, res.Body)
			}
			if tt.wantErrIs != nil && !errors.Is(res.Err, tt.wantErrIs) {
				t.Errorf("Err %v, want %v", res.Err, tt.wantErrIs)
			}
		})
	}
}

// TestCancelledRequestP15: a context cancelled mid-chain denies the request
// with a recognisable reason; no later OnRequest runs.
func TestCancelledRequestP15(t *testing.T) {
	log := &recLog{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &fake{name: "a", log: log, finish: true, req: func(context.Context, *gateway.Exchange) gateway.Action { cancel(); return gateway.Continue() }}
	b := &fake{name: "b", log: log, finish: true}
	c := buildFakes(t, Options{}, a, b)
	res := c.Run(ctx, req(), jsonUp("x"), ExchangeOptions{})
	if got := strings.Join(log.seq(), " "); got != "a.on_request a.on_finish" {
		t.Errorf("calls %s", got)
	}
	if !errors.Is(res.Err, ErrCanceled) || !errors.Is(res.Err, context.Canceled) || res.Outcome.Reason != ReasonCanceled ||
		res.Outcome.Kind != gateway.OutcomeDeny || res.Outcome.Status != StatusClientClosedRequest {
		t.Errorf("result %+v err %v", res.Outcome, res.Err)
	}
	// Already cancelled: no plugin runs at all, and none finishes.
	log2 := &recLog{}
	c2 := buildFakes(t, Options{}, &fake{name: "x", log: log2, finish: true})
	res = c2.Run(ctx, req(), jsonUp("x"), ExchangeOptions{})
	if len(log2.all()) != 0 || !errors.Is(res.Err, ErrCanceled) {
		t.Errorf("pre-cancelled: calls %v err %v", log2.seq(), res.Err)
	}
}

// TestBodiesP11: bodies reach plugins only when some plugin reads bodies.
func TestBodiesP11(t *testing.T) {
	for _, reads := range []bool{false, true} {
		t.Run(fmt.Sprintf("reads=%v", reads), func(t *testing.T) {
			log := &recLog{}
			a := &fake{name: "a", log: log, caps: gateway.Capabilities{ReadsBody: reads}}
			b := &fake{name: "b", log: log}
			c := buildFakes(t, Options{}, a, b)
			r := req()
			r.Body = nil
			c.Run(context.Background(), r, jsonUp(`{"x":1}`), ExchangeOptions{})
			for _, cl := range log.all() {
				if reads {
					if cl.reqBodyNil || (cl.hook == "on_response" && string(cl.respBody) != `{"x":1}`) {
						t.Errorf("%s.%s: body not buffered: req nil %v resp %q", cl.plugin, cl.hook, cl.reqBodyNil, cl.respBody)
					}
				} else if !cl.reqBodyNil || !cl.respBodyNil {
					t.Errorf("%s.%s: saw a body (req nil %v, resp nil %v), want nil", cl.plugin, cl.hook, cl.reqBodyNil, cl.respBodyNil)
				}
			}
		})
	}
}

// TestBodyWritesP17: the declared writer's change reaches the wire; anyone
// else's is refused, reported and never reaches it.
func TestBodyWritesP17(t *testing.T) {
	log := &recLog{}
	intruder := &fake{name: "intruder", log: log, caps: gateway.Capabilities{ReadsBody: true},
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetRequestBody([]byte("hacked"))
			return gateway.Continue()
		},
		resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetResponseBody([]byte("hacked"))
			return gateway.Continue()
		}}
	reqW := &fake{name: "req-writer", log: log, caps: gateway.Capabilities{WritesRequestBody: true},
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetRequestBody([]byte("redacted-req"))
			return gateway.Continue()
		}}
	respW := &fake{name: "resp-writer", log: log, caps: gateway.Capabilities{WritesResponseBody: true},
		resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetResponseBody([]byte("redacted-resp"))
			return gateway.Continue()
		}}
	c := buildFakes(t, Options{}, intruder, reqW, respW)
	rec := trace.NewRecorder()
	cl := &BufferClient{}
	up := jsonUp("original")
	up.Header.Set("Content-Length", "8")
	res := c.Run(context.Background(), req(), up, ExchangeOptions{Trace: rec, Client: cl})
	if string(res.RequestBody) != "redacted-req" {
		t.Errorf("upstream request body %q", res.RequestBody)
	}
	if cl.Body.String() != "redacted-resp" || string(res.Body) != "redacted-resp" || cl.Header.Get("Content-Length") != "" {
		t.Errorf("client got %q (Content-Length %q)", cl.Body.String(), cl.Header.Get("Content-Length"))
	}
	var p17 []string
	for _, w := range res.Warnings {
		if w.Rule == "P17" && w.Plugin == "intruder" {
			p17 = append(p17, w.Msg)
		}
	}
	if len(p17) != 2 {
		t.Errorf("want two P17 warnings for intruder, got %v", res.Warnings)
	}
	var mut []string
	for _, e := range rec.Events() {
		if e.Mutated != "" {
			mut = append(mut, e.Plugin+":"+e.Mutated)
		}
	}
	if strings.Join(mut, " ") != "req-writer:request_body resp-writer:response_body" {
		t.Errorf("trace mutations %v", mut)
	}
}

// TestBodyWritesKeptP17: with KeepUndeclaredWrites (choice
// P17.undeclared-write, kept) an undeclared write is seen by the later
// plugins and not reported, but the wire still gets the host's body or
// the declared writer's, also when the kept write comes after it. A write
// that could not apply even declared (the request body during
// OnResponse) is still refused and reported.
func TestBodyWritesKeptP17(t *testing.T) {
	log := &recLog{}
	first := &fake{name: "first", log: log, caps: gateway.Capabilities{ReadsBody: true}}
	intruder := &fake{name: "intruder", log: log, caps: gateway.Capabilities{ReadsBody: true},
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			if ex.SetRequestBody([]byte("hacked")) {
				t.Error("SetRequestBody reported a kept write as applied")
			}
			return gateway.Continue()
		},
		resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetResponseBody([]byte("hacked-resp"))
			ex.SetRequestBody([]byte("too-late"))
			return gateway.Continue()
		}}
	reqW := &fake{name: "req-writer", log: log, caps: gateway.Capabilities{WritesRequestBody: true},
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetRequestBody([]byte("redacted-req"))
			return gateway.Continue()
		}}
	respW := &fake{name: "resp-writer", log: log, caps: gateway.Capabilities{WritesResponseBody: true},
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetRequestBody([]byte("late")) // undeclared, after the declared writer's
			return gateway.Continue()
		},
		resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetResponseBody([]byte("redacted-resp"))
			return gateway.Continue()
		}}
	c := buildFakes(t, Options{KeepUndeclaredWrites: true}, first, intruder, reqW, respW)
	rec := trace.NewRecorder()
	cl := &BufferClient{}
	res := c.Run(context.Background(), req(), jsonUp("original"), ExchangeOptions{Trace: rec, Client: cl})
	if string(res.RequestBody) != "redacted-req" {
		t.Errorf("upstream request body %q; want the declared writer's", res.RequestBody)
	}
	if cl.Body.String() != "redacted-resp" || string(res.Body) != "redacted-resp" {
		t.Errorf("client got %q; want the declared writer's", cl.Body.String())
	}
	var seen []string
	for _, cl := range log.all() {
		seen = append(seen, cl.plugin+"."+cl.hook+"="+string(cl.reqBody)+"|"+string(cl.respBody))
	}
	want := []string{`first.on_request={"q":1}|`, `intruder.on_request={"q":1}|`, "req-writer.on_request=hacked|", "resp-writer.on_request=redacted-req|",
		"resp-writer.on_response=late|original", "req-writer.on_response=late|redacted-resp", "intruder.on_response=late|redacted-resp",
		"first.on_response=late|hacked-resp"}
	if !slices.Equal(seen, want) {
		t.Errorf("the plugins saw\n%q\nwant\n%q", seen, want)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Rule != "P17" || res.Warnings[0].Plugin != "intruder" || !strings.Contains(res.Warnings[0].Msg, "request body") {
		t.Errorf("warnings %v; want only intruder's request write during OnResponse refused", res.Warnings)
	}
	var mut []string
	for _, e := range rec.Events() {
		if e.Mutated != "" {
			mut = append(mut, e.Plugin+":"+e.Mutated)
		}
	}
	if strings.Join(mut, " ") != "req-writer:request_body resp-writer:response_body" {
		t.Errorf("trace mutations %v; a kept write is not one", mut)
	}
}

// TestBodyWritesKeptNeedsHeldBodyP17: where no plugin reads bodies, the
// plugins see none (P11), so there is nothing to keep an undeclared
// write in: it is refused and reported even with KeepUndeclaredWrites.
func TestBodyWritesKeptNeedsHeldBodyP17(t *testing.T) {
	log := &recLog{}
	w := &fake{name: "intruder", log: log, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		ex.SetRequestBody([]byte("hacked"))
		return gateway.Continue()
	}}
	after := &fake{name: "after", log: log}
	c := buildFakes(t, Options{KeepUndeclaredWrites: true}, w, after)
	res := c.Run(context.Background(), req(), jsonUp("original"), ExchangeOptions{})
	if string(res.RequestBody) != `{"q":1}` {
		t.Errorf("upstream request body %q", res.RequestBody)
	}
	for _, cl := range log.all() {
		if !cl.reqBodyNil {
			t.Errorf("%s.%s saw request body %q; want none (P11)", cl.plugin, cl.hook, cl.reqBody)
		}
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Rule != "P17" {
		t.Errorf("warnings %v; want the refused write", res.Warnings)
	}
}

// TestRejectStatusOutOfRange: a status outside 400–599 becomes 403, with a
// warning.
func TestRejectStatusOutOfRangeP15(t *testing.T) {
	for _, st := range []int{0, 200, 399, 600} {
		log := &recLog{}
		c := buildFakes(t, Options{}, &fake{name: "a", log: log, req: reject(st, "no")})
		res := c.Run(context.Background(), req(), jsonUp("x"), ExchangeOptions{})
		if res.Outcome.Status != 403 || res.Status != 403 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Msg, fmt.Sprint(st)) {
			t.Errorf("status %d: outcome %+v warnings %v", st, res.Outcome, res.Warnings)
		}
	}
}

// TestPanicsP15P16: a panicking hook ends the exchange with an error
// outcome (500) naming the plugin; under observe it is a shadow decision.
func TestPanicsP15P16(t *testing.T) {
	boom := func(context.Context, *gateway.Exchange) gateway.Action { panic("kaboom") }
	tests := []struct {
		name     string
		req      bool
		observe  bool
		want     string
		wantKind gateway.OutcomeKind
	}{
		{"request enforce", true, false, "a.on_request b.on_request b.on_finish a.on_finish", gateway.OutcomeError},
		{"response enforce", false, false, "a.on_request b.on_request c.on_request c.on_response b.on_response c.on_finish b.on_finish a.on_finish", gateway.OutcomeError},
		{"request observe", true, true, "a.on_request b.on_request c.on_request c.on_response b.on_response a.on_response c.on_finish b.on_finish a.on_finish", gateway.OutcomeAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recLog{}
			b := &fake{name: "b", log: log, finish: true}
			if tt.req {
				b.req = boom
			} else {
				b.resp = boom
			}
			fa, fc := &fake{name: "a", log: log, finish: true}, &fake{name: "c", log: log, finish: true}
			spec := Spec{Entries: []Entry{{Plugin: "a"}, {Plugin: "b"}, {Plugin: "c"}}}
			if tt.observe {
				spec.Entries[1].OnError = Observe
			}
			for _, f := range []*fake{fa, b, fc} {
				f.caps.Description = "d"
			}
			c, err := Build(spec, []gateway.Factory{fa.factory(), b.factory(), fc.factory()}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rec := trace.NewRecorder()
			res := c.Run(context.Background(), req(), jsonUp("x"), ExchangeOptions{Trace: rec})
			if got := strings.Join(log.seq(), " "); got != tt.want {
				t.Errorf("calls\n got %s\nwant %s", got, tt.want)
			}
			if res.Outcome.Kind != tt.wantKind {
				t.Errorf("outcome %+v", res.Outcome)
			}
			var pe *PanicError
			if !tt.observe && (!errors.As(res.Err, &pe) || pe.Plugin != "b" || res.Status != 500) {
				t.Errorf("err %v status %d", res.Err, res.Status)
			}
			if tt.observe && (len(res.Shadows) != 1 || res.Shadows[0].Error == "") {
				t.Errorf("shadows %+v", res.Shadows)
			}
			found := false
			for _, e := range rec.Events() {
				if e.Plugin == "b" && e.Action == "error" && strings.Contains(e.Error, "kaboom") && e.Shadow == tt.observe {
					found = true
				}
			}
			if !found {
				t.Errorf("no error event for b in %+v", rec.Events())
			}
		})
	}
}

// TestObserveP6: a rejection under observe is a shadow decision in every
// hook and the chain goes on.
func TestObserveP6(t *testing.T) {
	log := &recLog{}
	a := &fake{name: "a", log: log, caps: gateway.Capabilities{Description: "a"}, stream: true,
		req: reject(401, "who are you"),
		frame: func(context.Context, *gateway.Exchange, []byte, bool) gateway.Action {
			return gateway.Reject(451, "censored")
		}}
	b := &fake{name: "b", log: log, caps: gateway.Capabilities{Description: "b"}, resp: reject(500, "bad answer")}
	c, err := Build(Spec{Entries: []Entry{{Plugin: "a", OnError: Observe}, {Plugin: "b", OnError: Observe}}},
		[]gateway.Factory{a.factory(), b.factory()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder()
	cl := &BufferClient{}
	res := c.Run(context.Background(), req(), Upstream{Status: 200, Header: sseHeader(), Body: []byte("data: 1\n\n")}, ExchangeOptions{Trace: rec, Client: cl})
	if res.Outcome.Kind != gateway.OutcomeAllow || cl.Body.String() != "data: 1\n\n" {
		t.Fatalf("outcome %+v body %q", res.Outcome, cl.Body.String())
	}
	var got []string
	for _, s := range res.Shadows {
		got = append(got, fmt.Sprintf("%s/%s/%d/%d", s.Plugin, s.Hook, s.Frame, s.Status))
	}
	// b's OnResponse does not run: the response was streamed (P23).
	want := "a/on_request/-1/401 a/on_response_frame/0/451 a/on_response_frame/1/451"
	if strings.Join(got, " ") != want {
		t.Errorf("shadows %v, want %s", got, want)
	}
	shadowEvents := 0
	for _, e := range rec.Events() {
		if e.Shadow {
			shadowEvents++
		}
	}
	if shadowEvents != 3 {
		t.Errorf("%d shadow trace events, want 3", shadowEvents)
	}
}

// TestFinishP28P29P30 covers the finish context, the outcome and best
// effort.
func TestFinishP28P29P30(t *testing.T) {
	log := &recLog{}
	release := make(chan struct{})
	defer close(release)
	a := &fake{name: "a", log: log, finish: true}
	b := &fake{name: "b", log: log, finish: true, fin: func(context.Context, *gateway.Exchange) error { panic("finish panic") }}
	cF := &fake{name: "c", log: log, finish: true, fin: func(_ context.Context, ex *gateway.Exchange) error {
		ex.SetResponseBody([]byte("late")) // P30: dropped
		return errors.New("finish error")
	}}
	d := &fake{name: "d", log: log, finish: true, caps: gateway.Capabilities{WritesResponseBody: true},
		fin: func(ctx context.Context, ex *gateway.Exchange) error {
			ex.SetResponseBody([]byte("late too"))
			<-release // overruns its deadline
			return nil
		}}
	e := &fake{name: "e", log: log, finish: true, req: reject(403, "nope")}
	c := buildFakes(t, Options{FinishTimeout: 50 * time.Millisecond, Grace: 20 * time.Millisecond}, a, b, cF, d, e)
	ctx, cancel := context.WithCancel(context.Background())
	x := c.NewExchange(req(), ExchangeOptions{Trace: trace.NewRecorder()})
	if x.Request(ctx) {
		t.Fatal("request allowed")
	}
	cancel() // the client went away: finish contexts must not care (P28)
	res := x.Finish()
	if got := strings.Join(log.seq("on_finish"), " "); got != "e.on_finish d.on_finish c.on_finish b.on_finish a.on_finish" {
		t.Fatalf("finish order %s", got)
	}
	for _, cl := range log.all() {
		switch cl.hook {
		case "on_request":
			if cl.hasOutcome {
				t.Errorf("P29: %s saw an outcome during OnRequest", cl.plugin)
			}
		case "on_finish":
			if cl.ctxErr != nil || !cl.hasDeadline || time.Until(cl.deadline) > 50*time.Millisecond {
				t.Errorf("P28: %s finish ctx err %v deadline %v", cl.plugin, cl.ctxErr, cl.deadline)
			}
			o := cl.outcome
			if !cl.hasOutcome || o.Kind != gateway.OutcomeDeny || o.Status != 403 || o.DeniedBy != "e" || o.Reason != "nope" || o.Duration <= 0 {
				t.Errorf("P29: %s outcome %v %+v", cl.plugin, cl.hasOutcome, o)
			}
		}
	}
	var ws []string
	for _, w := range res.Warnings {
		ws = append(ws, w.String())
	}
	all := strings.Join(ws, "\n")
	for _, want := range []string{`"b": OnFinish: panic: finish panic`, `"c": OnFinish: finish error`, `P30: plugin "c": response body write refused`, `"d": OnFinish: ` + ErrAbandoned.Error()} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, `"d": response body write`) {
		t.Errorf("abandoned finisher's writes were read:\n%s", all)
	}
	n := len(res.Warnings)
	again := x.Finish()
	if len(log.seq("on_finish")) != 5 || len(again.Warnings) != n+1 || !strings.Contains(again.Warnings[n].Msg, "second time") {
		t.Errorf("P30: second Finish: %v", again.Warnings)
	}
}

// TestFinishDefaultDeadlineP28: the default finish deadline is 2 s.
func TestFinishDefaultDeadlineP28(t *testing.T) {
	log := &recLog{}
	c := buildFakes(t, Options{}, &fake{name: "a", log: log, finish: true})
	c.Run(context.Background(), req(), jsonUp("x"), ExchangeOptions{})
	cl := log.all()[len(log.all())-1]
	if d := time.Until(cl.deadline); cl.hook != "on_finish" || d < 1500*time.Millisecond || d > 2*time.Second {
		t.Errorf("finish deadline in %v, want about 2s", d)
	}
}

// TestStagesP30: the stages can be driven one by one; out-of-order calls
// only warn.
func TestStagesP30(t *testing.T) {
	log := &recLog{}
	c := buildFakes(t, Options{}, &fake{name: "a", log: log, finish: true})
	x := c.NewExchange(req(), ExchangeOptions{})
	x.Respond(context.Background(), jsonUp("x")) // before Request: ignored
	if !x.Request(context.Background()) {
		t.Fatal("denied")
	}
	x.Request(context.Background())
	res := x.Finish() // without a response
	if res.Outcome.Kind != gateway.OutcomeError || res.Status != 502 || len(res.Warnings) != 2 {
		t.Errorf("outcome %+v status %d warnings %v", res.Outcome, res.Status, res.Warnings)
	}
	if got := strings.Join(log.seq(), " "); got != "a.on_request a.on_finish" {
		t.Errorf("calls %s", got)
	}
}

// stateKeyInt is a second key of another type (P31).
var stateKeyInt = gateway.NewKey[int]("counter")

// TestStateP31: typed state set in OnRequest is visible in later hooks of the
// same exchange and never in another exchange, also concurrently.
func TestStateP31(t *testing.T) {
	log := &recLog{}
	var mu sync.Mutex
	bad := 0
	a := &fake{name: "a", log: log, finish: true, stream: true,
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			if _, ok := gateway.GetState(ex, stateKey); ok {
				mu.Lock()
				bad++
				mu.Unlock()
			}
			gateway.SetState(ex, stateKey, ex.Request.URL)
			gateway.SetState(ex, stateKeyInt, 0)
			return gateway.Continue()
		},
		frame: func(_ context.Context, ex *gateway.Exchange, _ []byte, _ bool) gateway.Action {
			n, _ := gateway.GetState(ex, stateKeyInt)
			gateway.SetState(ex, stateKeyInt, n+1)
			return gateway.Continue()
		},
		fin: func(_ context.Context, ex *gateway.Exchange) error {
			s, _ := gateway.GetState(ex, stateKey)
			n, _ := gateway.GetState(ex, stateKeyInt)
			if s != ex.Request.URL || n != 3 { // 2 frames + the closing call
				return fmt.Errorf("state %q/%d for %s", s, n, ex.Request.URL)
			}
			return nil
		}}
	c := buildFakes(t, Options{}, a)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := req()
			r.URL = fmt.Sprintf("http://svc/%d", i)
			up := Upstream{Status: 200, Header: sseHeader(), Body: []byte("data: a\n\ndata: b\n\n")}
			res := c.Run(context.Background(), r, up, ExchangeOptions{})
			if len(res.Warnings) != 0 {
				t.Errorf("exchange %d: %v", i, res.Warnings)
			}
		}()
	}
	wg.Wait()
	if bad != 0 {
		t.Errorf("%d exchanges saw another exchange's state", bad)
	}
	for _, cl := range log.all() {
		if cl.hook == "on_request" && cl.hasState {
			t.Errorf("state leaked into a new exchange: %q", cl.state)
		}
	}
}
