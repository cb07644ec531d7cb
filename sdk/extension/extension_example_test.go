package extension_test

import (
	"fmt"

	"github.com/abkit/abkit/sdk/extension"
	"github.com/abkit/abkit/sdk/gateway"
)

// Usage is what a parser stores under "usage".
type Usage struct {
	Model  string `json:"model"`
	Tokens int    `json:"tokens"`
}

func ExampleGet() {
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{Method: "POST", URL: "/v1/chat/completions"})

	// In process, a reader sees the writer's own struct.
	ex.SetExtension("usage", Usage{Model: "m", Tokens: 12})
	u, ok := extension.Get[Usage](ex, "usage")
	fmt.Println(u, ok)

	// Out of process, the value arrived as decoded JSON: a map.
	ctl.SetExtensions(map[string]any{"usage": map[string]any{"model": "m", "tokens": 12.0}})
	u, ok = extension.Get[Usage](ex, "usage")
	fmt.Println(u, ok)

	_, ok = extension.Get[Usage](ex, "absent")
	fmt.Println(ok)
	// Output:
	// {m 12} true
	// {m 12} true
	// false
}

func ExampleDecode() {
	_, err := extension.Decode[Usage](map[string]any{"model": "m", "tokens": "twelve"})
	fmt.Println(err)
	// Output: extension value does not decode into extension_test.Usage: json: cannot unmarshal string into Go struct field Usage.tokens of type int
}
