// Package trace defines the ordered trace every abkit runtime emits: one
// Event per hook, intercept or extension call, in the order the calls
// happened. The pipeline runtime (family P), the intercept dispatcher
// (family D) and the hook bus (family H) all emit it, so dry-run, replay and
// conformance show and compare any family the same way.
//
// The JSON form is stable: fields are only ever added. See docs/trace.md.
package trace

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/sdk/family"
)

// Family names a contract family.
type Family string

const (
	FamilyPipeline Family = family.Pipeline
	FamilyDispatch Family = family.Dispatch
	FamilyHooks    Family = family.Hooks
)

// Hook names used by the pipeline runtime.
const (
	HookInit            = "init"
	HookShutdown        = "shutdown"
	HookOnRequest       = "on_request"
	HookOnResponse      = "on_response"
	HookOnResponseFrame = "on_response_frame"
	HookOnFinish        = "on_finish"
)

// Mutation values: which body a call changed.
const (
	MutatedRequestBody  = "request_body"
	MutatedResponseBody = "response_body"
)

// Event is one call in a trace.
type Event struct {
	// Seq numbers events from 1 in the order the calls started.
	Seq    int    `json:"seq"`
	Family Family `json:"family"`
	// Direction is inbound or outbound for family P, empty otherwise.
	Direction string `json:"direction,omitempty"`
	// Hook is the pipeline hook (on_request, ...), the intercept point
	// (tool.before, ...) or the hook-bus hook kind.
	Hook string `json:"hook"`
	// Plugin is the plugin name, extension ID or hook ID.
	Plugin string `json:"plugin"`
	// Frame is the frame index for on_response_frame calls, counting from 0;
	// absent for other calls. The closing last=true call carries the number
	// of frames before it.
	Frame *int `json:"frame,omitempty"`
	Last  bool `json:"last,omitempty"`
	// Action is the answer: continue or reject (P), continue, block,
	// replace, allow or deny (D), the hook decision (H), or error.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	Status int    `json:"status,omitempty"`
	// Mutated says which body the call changed: request_body or
	// response_body.
	Mutated string `json:"mutated,omitempty"`
	// Shadow marks a rejection recorded under on_error: observe (P6); the
	// chain went on.
	Shadow bool `json:"shadow,omitempty"`
	// Error is a failure of the call itself: an error, panic, timeout or
	// contract violation.
	Error string `json:"error,omitempty"`
	// Phase separates the parts of an intercept walk (walk, strategy, event).
	Phase string `json:"phase,omitempty"`
	// Headers are the header changes the call made (P32, P33), in name
	// order, values redacted; absent when it changed none.
	Headers []HeaderChange `json:"headers,omitempty"`
	// Rejection is what a rejecting call gave the client besides the
	// status (P34): headers and body, redacted.
	Rejection *Rejection `json:"rejection,omitempty"`
	// Extensions are the exchange extensions the call set or removed (P
	// only), in the order of their first change, so that an author sees
	// what a parser extracted at the step it did.
	Extensions []ExtensionDelta `json:"extensions,omitempty"`
	DurationNS int64            `json:"duration_ns"`
}

// HeaderChange is one header a call set, replaced or deleted.
type HeaderChange struct {
	// Response is set for a response header, unset for a request header.
	Response bool   `json:"response,omitempty"`
	Name     string `json:"name"`
	// Values are the header's values after the call (redacted); absent
	// when Deleted.
	Values  []string `json:"values,omitempty"`
	Deleted bool     `json:"deleted,omitempty"`
	// Refused says why the change was not applied (a framing header, or
	// a response header changed after the head was sent).
	Refused string `json:"refused,omitempty"`
}

// Rejection is the response a rejection carried (P34), redacted.
type Rejection struct {
	Header      map[string][]string `json:"header,omitempty"`
	ContentType string              `json:"content_type,omitempty"`
	Body        string              `json:"body,omitempty"`
}

// ExtensionDelta is one extension a pipeline hook call set or removed.
type ExtensionDelta struct {
	Key string `json:"key"`
	// Value is the value the call stored, as JSON with credentials
	// redacted; absent when Removed.
	Value json.RawMessage `json:"value,omitempty"`
	// Removed: the call deleted the key.
	Removed bool `json:"removed,omitempty"`
	// Refused says why the host refused the value (it breaks the schema
	// its writer declares, X1); the key kept its previous value.
	Refused string `json:"refused,omitempty"`
}

// UnmarshalJSON reads d keeping Value compact, as the runtime records it,
// so that a trace read back from indented JSON (a golden file, the live
// API) equals the one recorded.
func (d *ExtensionDelta) UnmarshalJSON(b []byte) error {
	type plain ExtensionDelta
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if len(p.Value) > 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, p.Value); err != nil {
			return err
		}
		p.Value = c.Bytes()
	}
	*d = ExtensionDelta(p)
	return nil
}

// FrameIndex returns a pointer to i for Event.Frame.
func FrameIndex(i int) *int { return &i }

// Recorder collects events. A nil *Recorder records nothing and costs a nil
// check, so runtimes keep tracing off for free. The zero Recorder is ready
// to use. It is safe for concurrent use.
type Recorder struct {
	mu sync.Mutex
	// events is the block being filled; full are the filled blocks
	// before it, in order. A trace grows by new blocks, never by copying
	// what it holds: an Event is large and full of pointers, and growing
	// one slice of them by doubling was most of a streamed exchange's
	// tracing cost (hundreds of frame events).
	events []Event
	full   [][]Event
	nfull  int // events in full
	now    func() time.Time
	// base, when set, is the wall and monotonic time the recorder was
	// made at, and now is time.Now: Now then reads only the monotonic
	// clock (base plus the time since it). time.Now reads two clocks,
	// and a clock read is slow on some virtual machines; a traced call
	// took two time.Now, four clock reads.
	base time.Time
	// sink, when set, receives each event instead of the recorder keeping
	// it; n numbers them.
	sink  func(Event)
	n     int
	onAdd func(Event)
	// watching, when set, says whether onAdd wants events now: a copy is
	// made for onAdd only then.
	watching func() bool
	// frames holds the frame indexes events point to, a block at a time,
	// so that a frame event costs no allocation of its own (AddFrame).
	frames []int
	// frame is the index a stream recorder's frame events point to.
	frame int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{now: time.Now, base: time.Now()} }

// NewStreamRecorder returns a recorder that keeps nothing: each event goes
// to sink as it is added, numbered and in order (sink runs under the
// recorder's lock, so it must not add events itself). A trace then costs
// no memory per event; Events returns nil. An event's Frame points into
// the recorder and is valid only during the sink call (the next frame
// event changes it): a sink that keeps an event copies the index.
func NewStreamRecorder(sink func(Event)) *Recorder {
	return &Recorder{now: time.Now, base: time.Now(), sink: sink}
}

// WithoutDurations makes r read no clock: Now returns the zero time, so
// runtimes time no call and every event's duration is 0. It is for traces
// compared without durations (golden files), where the clock reads
// around every call were a measurable share of a replay. It returns r.
func (r *Recorder) WithoutDurations() *Recorder {
	r.now, r.base = zeroTime, time.Time{}
	return r
}

func zeroTime() time.Time { return time.Time{} }

// NewWatchedRecorder returns an empty recorder that also hands each event
// to onAdd as it is added (with its Seq set, a copy), on the goroutine
// that added it: a live view shows calls as they happen, not when the
// exchange ends. onAdd must not block for long; it delays the call that
// produced the event.
func NewWatchedRecorder(onAdd func(Event)) *Recorder {
	return &Recorder{now: time.Now, base: time.Now(), onAdd: onAdd}
}

// NewWatchedRecorderWhen is NewWatchedRecorder for a watcher that is not
// always there (a live view nobody may be looking at): each event goes to
// onAdd only while watching reports true, so that an unwatched trace
// costs no copy per event.
func NewWatchedRecorderWhen(watching func() bool, onAdd func(Event)) *Recorder {
	return &Recorder{now: time.Now, base: time.Now(), onAdd: onAdd, watching: watching}
}

// Grow makes room for n more events: a caller that knows about how many
// calls it will record (a live exchange through a known chain) keeps
// them in one allocation instead of a growing slice.
func (r *Recorder) Grow(n int) {
	if r == nil || r.sink != nil || n <= 0 {
		return
	}
	r.mu.Lock()
	if r.full == nil {
		r.events = slices.Grow(r.events, n)
	} else if cap(r.events)-len(r.events) < n {
		r.nextBlock(n)
	}
	r.mu.Unlock()
}

// Enabled reports whether r records; callers skip timing when it does not.
func (r *Recorder) Enabled() bool { return r != nil }

// Now returns the current time for durations, or the zero time when r is
// nil, so that a disabled trace never reads the clock.
func (r *Recorder) Now() time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.clock()
}

// clock returns the recorder's time source; a zero Recorder has none set.
func (r *Recorder) clock() time.Time {
	switch {
	case !r.base.IsZero():
		// One monotonic read; the wall part moves with it, which is all
		// a duration needs.
		return r.base.Add(time.Since(r.base))
	case r.now == nil:
		return time.Now()
	}
	return r.now()
}

// Add appends e, assigning its sequence number, and returns it.
func (r *Recorder) Add(e Event) int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	return r.addLocked(&e)
}

// AddFrame is Add for an event of frame index frame: e.Frame is set to
// point at it, and e's Seq is set too. The index is kept in a block the
// recorder shares among its events, so recording a frame allocates
// nothing per event. e is taken by pointer and copied once, into the
// trace's block: an Event is 256 bytes, and the copies on the way were a
// measurable part of a frame call's tracing.
func (r *Recorder) AddFrame(e *Event, frame int) int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	if r.sink != nil {
		// The sink has the event for its call only: one index serves
		// every frame event of a stream recorder.
		r.frame = frame
		e.Frame = &r.frame
		return r.addLocked(e)
	}
	if len(r.frames) == cap(r.frames) {
		// A new block; the old one stays as it is, shared by the events
		// that point into it (nobody writes an index after this).
		r.frames = make([]int, 0, 256)
	}
	r.frames = append(r.frames, frame)
	e.Frame = &r.frames[len(r.frames)-1]
	return r.addLocked(e)
}

// addLocked adds *e, numbering it (e.Seq is set), with r.mu held, and
// releases it.
func (r *Recorder) addLocked(e *Event) int {
	r.n++
	e.Seq = r.n
	if r.sink != nil {
		r.sink(*e)
		r.mu.Unlock()
		return e.Seq
	}
	if len(r.events) == cap(r.events) && cap(r.events) >= minBlock {
		r.nextBlock(cap(r.events))
	}
	r.events = append(r.events, *e)
	onAdd := r.onAdd
	r.mu.Unlock()
	if onAdd != nil && (r.watching == nil || r.watching()) {
		onAdd(e.clone())
	}
	return e.Seq
}

// minBlock is the smallest block past which a trace grows by a new block
// rather than by append (a small trace stays one slice).
const minBlock = 16

// nextBlock moves the current block to full and starts one with room for
// at least n events, twice the last block's size at most 4,096.
func (r *Recorder) nextBlock(n int) {
	if len(r.events) > 0 {
		r.full = append(r.full, r.events)
		r.nfull += len(r.events)
	}
	r.events = make([]Event, 0, max(n, min(2*cap(r.events), 4096)))
}

// joined returns every event in one slice: the block itself when there is
// only one (owned by the caller only if the recorder forgets it).
func (r *Recorder) joined() []Event {
	if len(r.full) == 0 {
		return r.events
	}
	out := make([]Event, 0, r.nfull+len(r.events))
	for _, b := range r.full {
		out = append(out, b...)
	}
	return append(out, r.events...)
}

// Take returns the events recorded so far without copying them and
// forgets them: the caller owns the slice, and the recorder neither keeps
// nor changes it (events added later are numbered on and returned by the
// next Take or Events). It is for a run's owner that reads the trace once
// at the end, where Events' deep copy would be the only reason to
// allocate per event.
func (r *Recorder) Take() []Event {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.joined()
	r.events, r.full, r.nfull = nil, nil, 0
	return out
}

// Events returns a deep copy of the events recorded so far.
func (r *Recorder) Events() []Event {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 && len(r.full) == 0 {
		return nil // as before: callers may marshal it
	}
	out := r.joined()
	if len(r.full) == 0 {
		out = slices.Clone(out)
	}
	// One block for every frame index, instead of one allocation each.
	nf := 0
	for _, e := range out {
		if e.Frame != nil {
			nf++
		}
	}
	frames := make([]int, 0, nf)
	for i := range out {
		if f := out[i].Frame; f != nil {
			frames = append(frames, *f)
			out[i].Frame = &frames[len(frames)-1]
		}
	}
	return out
}

// clone copies e so that the copy shares no Frame pointer with it.
func (e Event) clone() Event {
	if e.Frame != nil {
		e.Frame = FrameIndex(*e.Frame)
	}
	e.Extensions = slices.Clone(e.Extensions)
	return e
}

// Since returns the nanoseconds since start, or 0 when r is nil.
func (r *Recorder) Since(start time.Time) int64 {
	if r == nil {
		return 0
	}
	if r.now == nil || !r.base.IsZero() {
		return time.Since(start).Nanoseconds() // the monotonic clock alone
	}
	return r.now().Sub(start).Nanoseconds()
}

// Trace is a whole run: the events, and warnings that belong to no single
// call (for example an unterminated final SSE block).
type Trace struct {
	Events   []Event  `json:"events"`
	Warnings []string `json:"warnings,omitempty"`
}

// WithoutDurations returns a copy of events with every duration zeroed, for
// comparing traces from different runs.
func WithoutDurations(events []Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		e = e.clone()
		e.DurationNS = 0
		out[i] = e
	}
	return out
}

// MarshalIndent is the canonical JSON form of a trace, used for golden files.
func (t Trace) MarshalIndent() ([]byte, error) {
	if t.Events == nil {
		t.Events = []Event{}
	}
	return json.MarshalIndent(t, "", "  ")
}

// String is the change as one line: "request X-Stamp: v", "response
// -Server" (deleted), with " (refused: why)" when it was not applied.
func (c HeaderChange) String() string {
	side := "request "
	if c.Response {
		side = "response "
	}
	s := side + c.Name + ": " + strings.Join(c.Values, ", ")
	if c.Deleted {
		s = side + "-" + c.Name
	}
	if c.Refused != "" {
		s += " (refused: " + c.Refused + ")"
	}
	return s
}

// HeaderSummary is the header changes of an event on one line, "; "
// between them; "" when there are none.
func (e *Event) HeaderSummary() string {
	parts := make([]string, len(e.Headers))
	for i, c := range e.Headers {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// String is the rejection's response on one line: headers in name order,
// the content type and the body.
func (r *Rejection) String() string {
	if r == nil {
		return ""
	}
	names := make([]string, 0, len(r.Header))
	for n := range r.Header {
		names = append(names, n)
	}
	slices.Sort(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, n+": "+strings.Join(r.Header[n], ", "))
	}
	if r.ContentType != "" {
		parts = append(parts, "content type "+r.ContentType)
	}
	if r.Body != "" {
		parts = append(parts, "body "+strconv.Quote(r.Body))
	}
	return strings.Join(parts, "; ")
}
