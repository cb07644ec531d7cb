package redact_test

import (
	"fmt"
	"net/http"

	"github.com/abkit/abkit/sdk/redact"
)

func ExampleURL() {
	fmt.Println(redact.URL("https://api.example/v1/chat?api_key=abc123&model=m"))
	// Output: https://api.example/v1/chat?api_key=[REDACTED:api_key]&model=m
}

func ExampleHeader() {
	h := redact.Header(http.Header{"Authorization": {"Bearer abc"}, "Accept": {"text/event-stream"}})
	fmt.Println(h.Get("Authorization"), h.Get("Accept"))
	// Output: [REDACTED:authorization] text/event-stream
}
