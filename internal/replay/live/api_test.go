package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/trace"
	"github.com/google/go-cmp/cmp"
)

// TestCatalogReadsServe: abctl's own url: catalog source reads serve's
// plugins and pipeline endpoints: the chain's plugins with their
// capabilities and config schema, and the live chain in order with each
// entry's config.
func TestCatalogReadsServe(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, hangGuard)
	cat, err := catalog.Load(context.Background(), []string{"url:" + s.base + PathPlugins}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range cat.Plugins {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"audit-log", "guardrail", "inference-parser"}, names); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	g, ok := cat.Lookup("guardrail")
	if !ok || g.Capabilities == nil || !g.Capabilities.ReadsBody || len(g.Capabilities.RequiresAny) == 0 || g.Config == nil {
		t.Errorf("guardrail descriptor: %+v", g)
	}
	live, err := catalog.Load(context.Background(), []string{"url:" + s.base + PathPipeline}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, ok = live.Lookup("guardrail")
	if !ok || len(g.Live) != 1 || g.Live[0].Direction != "outbound" || g.Live[0].Position != 2 {
		t.Fatalf("guardrail live entry: %+v", g.Live)
	}
	if cfg, _ := g.Live[0].Config["status"].(float64); cfg != 451 {
		t.Errorf("guardrail live config: %v", g.Live[0].Config)
	}
}

// TestExchangeDetail: the detail of an exchange holds its trace in the
// docs/trace.md format, the request and the upstream's answer redacted
// (an Authorization header, an api_key in the body), and bodies cut at
// the body cap are marked truncated with their whole size, after which
// the exchange is not offered as a fixture.
func TestExchangeDetail(t *testing.T) {
	up := newUpstream(t)
	const bodyCap = 40
	s := startServe(t, up.URL, testChain, Options{BodyCap: bodyCap}, hangGuard)
	req, _ := http.NewRequest(http.MethodPost, s.base+"/v1/json?secret", strings.NewReader(`{"q":"short"}`))
	req.Header.Set("Authorization", "Bearer sk-proj-0123456789abcdefghijklmnop")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.Wait()

	var d exchangeDetail
	if code := get(t, s.base+PathExchanges+"/1", &d); code != 200 {
		t.Fatalf("status %d", code)
	}
	raw := fmt.Sprintf("%+v", d)
	if strings.Contains(raw, "sk-proj-") || strings.Contains(raw, "sk-live-") {
		t.Errorf("a credential reached the API: %s", raw)
	}
	if got := d.Request.Header.Get("Authorization"); !strings.Contains(got, "REDACTED") {
		t.Errorf("Authorization shown as %q", got)
	}
	if d.BodyCap != bodyCap || d.Upstream == nil || !d.Upstream.Truncated || d.Upstream.Body == nil || d.Upstream.Body.Size <= bodyCap {
		t.Fatalf("upstream body: cap %d, %+v", d.BodyCap, d.Upstream)
	}
	if d.Request.Body == nil || d.Request.Body.Truncated || *d.Request.Body.Text != `{"q":"short"}` {
		t.Errorf("request body: %+v", d.Request.Body)
	}
	if d.Fixture || !strings.Contains(d.NoFixture, "body-cap") {
		t.Errorf("truncated exchange: fixture %t, %q", d.Fixture, d.NoFixture)
	}
	if code := get(t, s.base+PathExchanges+"/1/fixture", nil); code != http.StatusConflict {
		t.Errorf("fixture of a truncated exchange: %d, want 409", code)
	}
	var hooks []string
	for _, e := range d.Trace.Events {
		if e.Family != trace.FamilyPipeline || e.Direction != "outbound" {
			t.Errorf("event %+v", e)
		}
		hooks = append(hooks, e.Hook+" "+e.Plugin)
	}
	want := []string{"on_request inference-parser", "on_request guardrail", "on_request audit-log", "on_response audit-log",
		"on_response_frame guardrail", "on_response_frame inference-parser", "on_finish audit-log"}
	if diff := cmp.Diff(want, hooks); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}

	for _, c := range []struct {
		path string
		code int
	}{
		{PathExchanges + "/99", http.StatusNotFound},
		{PathExchanges + "/x", http.StatusNotFound},
		{APIPrefix + "v2/nothing", http.StatusNotFound},
	} {
		if code := get(t, s.base+c.path, nil); code != c.code {
			t.Errorf("GET %s: %d, want %d", c.path, code, c.code)
		}
	}
	resp, err = client.Post(s.base+PathExchanges, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the API: %d, want 405", resp.StatusCode)
	}
	var list exchangeList
	get(t, s.base+PathExchanges, &list)
	if list.Served != 1 {
		t.Errorf("API requests counted as exchanges: served %d", list.Served)
	}
}

// TestEventStream: a subscriber sees exchange_started, then each trace
// event as the call happens (seq 1, 2, … as in the detail), then
// exchange_finished with the summary; a denied exchange names the plugin.
func TestEventStream(t *testing.T) {
	up := newUpstream(t)
	s := startServe(t, up.URL, testChain, Options{}, hangGuard)
	events := subscribe(t, s.base)
	for _, c := range []struct{ path, body string }{
		{"/v1/stream?n=2", `{"stream":true}`},
		{"/v1/json", `{"q":"drop table x"}`},
	} {
		resp, err := client.Post(s.base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	type seen struct {
		started  bool
		events   []trace.Event
		finished *Summary
	}
	byID := map[uint64]*seen{1: {}, 2: {}}
	lastID := 0
	for byID[1].finished == nil || byID[2].finished == nil {
		ev, err := readEvent(events)
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		id, _ := strconv.Atoi(ev.id)
		if id <= lastID {
			t.Fatalf("event id %d after %d", id, lastID)
		}
		lastID = id
		switch ev.name {
		case "exchange_started":
			var st startedEvent
			json.Unmarshal([]byte(ev.data), &st)
			x := byID[st.ID]
			if x == nil || x.started {
				t.Fatalf("unexpected start %s", ev.data)
			}
			x.started = true
		case "trace":
			var te traceEvent
			json.Unmarshal([]byte(ev.data), &te)
			x := byID[te.Exchange]
			if x == nil || !x.started || x.finished != nil {
				t.Fatalf("trace event outside its exchange: %s", ev.data)
			}
			if te.Event.Seq != len(x.events)+1 {
				t.Fatalf("exchange %d: trace seq %d after %d events", te.Exchange, te.Event.Seq, len(x.events))
			}
			x.events = append(x.events, te.Event)
		case "exchange_finished":
			var sum Summary
			json.Unmarshal([]byte(ev.data), &sum)
			x := byID[sum.ID]
			if x == nil || !x.started {
				t.Fatalf("unexpected finish %s", ev.data)
			}
			x.finished = &sum
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
	if f := byID[1].finished; f.Outcome != "allow" || !f.Streamed || f.Frames != 2 {
		t.Errorf("stream summary %+v", f)
	}
	if f := byID[2].finished; f.Outcome != "deny" || f.DeniedBy != "guardrail" || f.Status != 451 {
		t.Errorf("denied summary %+v", f)
	}
	for id, x := range byID {
		var d exchangeDetail
		get(t, fmt.Sprintf("%s%s/%d", s.base, PathExchanges, id), &d)
		if diff := cmp.Diff(trace.WithoutDurations(d.Trace.Events), trace.WithoutDurations(x.events)); diff != "" {
			t.Errorf("exchange %d: streamed trace events differ from the detail (-detail +stream):\n%s", id, diff)
		}
	}
}
