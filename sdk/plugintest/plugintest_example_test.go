package plugintest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
)

// blocker rejects a request whose body holds a word.
type blocker struct{ word string }

func (blocker) Name() string { return "blocker" }
func (blocker) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: true, Description: "rejects requests that hold a word"}
}

func (b blocker) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	if strings.Contains(string(ex.RequestBody()), b.word) {
		return gateway.Reject(http.StatusForbidden, "holds "+b.word)
	}
	return gateway.Continue()
}

func (blocker) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

func Example() {
	f := gateway.Factory{Name: "blocker", New: func(json.RawMessage) (gateway.Plugin, error) { return blocker{word: "drop"}, nil }}
	p := plugintest.New(fmtT{}, f, "")

	r := plugintest.NewRun("POST", "/v1/chat", []byte(`{"q":"drop table"}`))
	a := r.Request(context.Background(), p)
	fmt.Println(a.IsContinue(), a.Status, a.Reason)

	r = plugintest.NewRun("POST", "/v1/chat", []byte(`{"q":"hello"}`))
	fmt.Println(r.Request(context.Background(), p).IsContinue())
	// Output:
	// false 403 holds drop
	// true
}

// fmtT stands in for the *testing.T a test passes to New.
type fmtT struct{}

func (fmtT) Helper()                        {}
func (fmtT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
