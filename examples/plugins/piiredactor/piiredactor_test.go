package piiredactor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/piiredactor"
	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

// P17: the declared response writer rewrites the buffered body; the write
// is applied and recorded; counts land in the extension.
func TestRedactsBufferedBody_P17(t *testing.T) {
	body := `{"choices":[{"message":{"content":"Mail jane.doe+x@example.co.uk or call (555) 123-4567 / +1 555-987-6543; card 4111 1111 1111 1111, not 4111 1111 1111 1112; order 12345678901234"}}]}`
	p := plugintest.New(t, piiredactor.Factory(), "")
	r := plugintest.NewRun("POST", "/", nil)
	r.Request(context.Background(), p)
	r.Respond(200, "application/json")
	if a := r.Response(context.Background(), []byte(body), p); !a.IsContinue() {
		t.Fatalf("rejected: %+v", a)
	}
	got := string(r.Ex.ResponseBody())
	want := `{"choices":[{"message":{"content":"Mail [REDACTED:email] or call [REDACTED:phone] / [REDACTED:phone]; card [REDACTED:card], not 4111 1111 1111 1112; order 12345678901234"}}]}`
	if got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
	if !json.Valid(r.Ex.ResponseBody()) {
		t.Fatal("redacted body is not valid JSON")
	}
	if _, resp := r.Ctl.TakeMutated(); !resp {
		t.Fatal("response body not marked mutated")
	}
	if w := r.Ctl.TakeWrites(); len(w) != 1 || !w[0].Applied || w[0].Plugin != piiredactor.Name {
		t.Fatalf("writes %+v", w)
	}
	counts, _ := r.Ex.Extension(piiredactor.Key)
	if c := counts.(map[string]int); c["email"] != 1 || c["phone"] != 2 || c["card"] != 1 {
		t.Fatalf("counts %v", c)
	}
}

// Nothing to redact, a binary body, or no body: no write at all.
func TestNoWriteWhenClean(t *testing.T) {
	p := plugintest.New(t, piiredactor.Factory(), `{"redact":["email"]}`)
	for _, tc := range []struct{ ct, body string }{
		{"application/json", `{"phone":"555-123-4567"}`}, // phones not configured
		{"image/png", "jane@example.com"},
		{"text/plain", ""},
	} {
		r := plugintest.NewRun("GET", "/", nil)
		r.Respond(200, tc.ct)
		r.Response(context.Background(), []byte(tc.body), p)
		if w := r.Ctl.TakeWrites(); len(w) != 0 {
			t.Errorf("%s %q: writes %+v", tc.ct, tc.body, w)
		}
	}
}

// A streamed response buffered under P18 is SSE text; redaction keeps the
// framing.
func TestBufferedStream_P18(t *testing.T) {
	p := plugintest.New(t, piiredactor.Factory(), `{"replacement":"***"}`)
	r := plugintest.NewRun("POST", "/", nil)
	r.Respond(200, "text/event-stream")
	r.Response(context.Background(), []byte("data: {\"delta\":\"x@y.io\"}\n\ndata: [DONE]\n\n"), p)
	if got := string(r.Ex.ResponseBody()); got != "data: {\"delta\":\"***\"}\n\ndata: [DONE]\n\n" {
		t.Fatalf("got %q", got)
	}
}

// P17: without the write capability the same write is refused (the host
// rule); the plugin declares it, so its writes apply only in OnResponse.
func TestWriteOutsideResponseRefused_P17(t *testing.T) {
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{})
	ctl.Enter(piiredactor.Name, gateway.PhaseResponse, false, false)
	ctl.SetResponseBody([]byte("a@b.cd"))
	plugintest.New(t, piiredactor.Factory(), "").OnResponse(context.Background(), ex)
	if w := ctl.TakeWrites(); len(w) != 1 || w[0].Applied || string(ex.ResponseBody()) != "a@b.cd" {
		t.Fatalf("writes %+v, body %q", w, ex.ResponseBody())
	}
}

// P6: strict config.
func TestConfig_P6(t *testing.T) {
	for config, want := range map[string]string{
		`{"redact":["ssn"]}`:       `redact[0] "ssn"`,
		`{"replacement":"\"x\""}`:  `field "replacement"`,
		`{"redact":"email"}`:       `field "redact": want array`,
		`{"redact":[],"mask":"x"}`: `unknown field "mask"`,
	} {
		if _, err := piiredactor.Factory().New([]byte(config)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: err = %v, want %q", config, err, want)
		}
	}
	if err := config.CheckSchema(piiredactor.Schema(), piiredactor.Config{}); err != nil {
		t.Fatal(err)
	}
}

// P4, P5: write implies reads; description.
func TestCapabilities_P4_P5(t *testing.T) {
	c := plugintest.New(t, piiredactor.Factory(), "").Capabilities()
	if err := gateway.CheckDescription(c.Description); err != nil {
		t.Fatal(err)
	}
	if !c.WritesResponseBody || !c.Normalize().ReadsBody {
		t.Fatalf("capabilities %+v", c)
	}
}
