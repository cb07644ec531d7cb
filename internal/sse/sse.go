// Package sse is the old home of abkit's SSE framer, now public as
// github.com/abkit/abkit/sdk/sse. These aliases keep code written against
// this path building; new code imports sdk/sse.
//
// Deprecated: import github.com/abkit/abkit/sdk/sse.
package sse

import "github.com/abkit/abkit/sdk/sse"

// Framer is [sse.Framer].
type Framer = sse.Framer

// Event is [sse.Event].
type Event = sse.Event

// Parse is [sse.Parse].
func Parse(raw []byte) Event { return sse.Parse(raw) }

// ParseView is [sse.ParseView].
func ParseView(raw []byte) Event { return sse.ParseView(raw) }
