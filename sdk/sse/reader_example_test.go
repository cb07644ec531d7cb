package sse_test

import (
	"fmt"

	"github.com/abkit/abkit/sdk/sse"
)

// printer is a Handler: it prints each event's fields and raw bytes.
type printer struct{}

func (printer) Event(ev sse.Event) {
	fmt.Printf("event=%q id=%q data=%q raw=%q\n", ev.Event, ev.ID, ev.Data, ev.Raw)
}

func (printer) Body(body []byte) { fmt.Printf("body %s\n", body) }

// A streaming plugin feeds each OnResponseFrame call to its Reader; how the
// host chunked the stream does not change what the Handler gets.
func ExampleReader() {
	var r sse.Reader
	for _, frame := range []string{"event: delta\nid: 1\nda", "ta: a\ndata: b\n\n: ping\n\n", "data: [DONE]\n\n"} {
		r.Feed("text/event-stream", []byte(frame), false, printer{})
	}
	r.Feed("text/event-stream", nil, true, printer{})

	// Anything that is not an event stream arrives once, whole.
	var j sse.Reader
	j.Feed("application/json", []byte(`{"ok":`), false, printer{})
	j.Feed("application/json", []byte(`true}`), true, printer{})
	// Output:
	// event="delta" id="1" data="a\nb" raw="event: delta\nid: 1\ndata: a\ndata: b\n\n"
	// event="" id="" data="[DONE]" raw="data: [DONE]\n\n"
	// body {"ok":true}
}

func ExampleEvents() {
	body := []byte("retry: 3000\ndata: first\n\n: keep-alive\n\nevent: end\ndata\n\ndata: cut short")
	for ev := range sse.Events(body) {
		fmt.Printf("%q %q retry=%d/%v\n", ev.Event, ev.Data, ev.Retry, ev.HasRetry)
	}
	// Output:
	// "" "first" retry=3000/true
	// "end" "" retry=0/false
}

func ExampleFramer() {
	var f sse.Framer
	emit := func(raw []byte, isFrame bool) error {
		fmt.Printf("%q frame=%v\n", raw, isFrame)
		return nil
	}
	_ = f.Feed([]byte("data: x\r\n\r\n: comment\n\ndata: y"), emit)
	n, _ := f.End(emit)
	fmt.Println("unterminated bytes:", n)
	// Output:
	// "data: x\r\n\r\n" frame=true
	// ": comment\n\n" frame=false
	// "data: y" frame=false
	// unterminated bytes: 7
}
