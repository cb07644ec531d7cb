package pipeline

import (
	"bytes"
	"net/http"
)

// BufferClient is a ClientWriter that keeps everything the client would get,
// and records the boundaries of each flush, for dry-run and tests.
type BufferClient struct {
	Status int
	Header http.Header
	Body   bytes.Buffer
	// Flushed holds the body length at each Flush.
	Flushed []int
	// Fail, when set, is returned by every Write (a client that went away).
	Fail error
}

// WriteHeader records the status and headers.
func (c *BufferClient) WriteHeader(status int, h http.Header) { c.Status, c.Header = status, h.Clone() }

// Write appends p to Body.
func (c *BufferClient) Write(p []byte) (int, error) {
	if c.Fail != nil {
		return 0, c.Fail
	}
	return c.Body.Write(p)
}

// Flush records the body length so far.
func (c *BufferClient) Flush() { c.Flushed = append(c.Flushed, c.Body.Len()) }

// HTTPClient adapts an http.ResponseWriter to a ClientWriter.
type HTTPClient struct{ W http.ResponseWriter }

// WriteHeader copies h into the response headers and writes the status.
func (c HTTPClient) WriteHeader(status int, h http.Header) {
	dst := c.W.Header()
	for k, v := range h {
		dst[k] = v
	}
	c.W.WriteHeader(status)
}

// Write writes p to the response.
func (c HTTPClient) Write(p []byte) (int, error) { return c.W.Write(p) }

// Flush flushes the response if the writer supports it.
func (c HTTPClient) Flush() {
	if f, ok := c.W.(http.Flusher); ok {
		f.Flush()
	}
}
