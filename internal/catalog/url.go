package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/abkit/abkit/internal/redact"

	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
)

type urlSource struct {
	spec     string
	url      string
	fetchURL string
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	env      string // the variable that raises maxBytes, when it is the default
}

func newURLSource(spec, raw string, opts Options) (*urlSource, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("source %q: want an http or https URL, such as url:http://gateway:9901/plugins", redact.URL(spec))
	}
	// Credentials in the URL (user-info, ?token=) are used to fetch and
	// shown nowhere: spec and url are what errors, ORIGIN and -o json print.
	s := &urlSource{spec: redact.URL(spec), url: redact.URL(raw), fetchURL: raw, client: opts.HTTPClient, timeout: opts.URLTimeout, maxBytes: opts.URLMaxBytes}
	if s.client == nil {
		s.client = &http.Client{}
	}
	if s.timeout <= 0 {
		s.timeout = DefaultURLTimeout
	}
	if s.maxBytes <= 0 {
		s.maxBytes, s.env = limits.URLBody.Max(), limits.URLBody.Env
	}
	return s, nil
}

func (s *urlSource) Spec() string { return s.spec }

// WirePlugin is one plugin of a gateway's plugin list endpoint
// ({"plugins": [...]}), the shape url: sources read and abctl serve
// writes (docs/catalog.md).
type WirePlugin struct {
	Name               string          `json:"name"`
	Description        string          `json:"description"`
	ReadsBody          bool            `json:"readsBody"`
	WritesRequestBody  bool            `json:"writesRequestBody"`
	WritesResponseBody bool            `json:"writesResponseBody"`
	Requires           []string        `json:"requires"`
	RequiresAny        []string        `json:"requiresAny"`
	Fields             []gateway.Field `json:"fields"`
	Version            string          `json:"version,omitempty"`
}

// WireLive is one entry of a gateway's live-chain endpoint
// ({"inbound": [...], "outbound": [...]}), read by url: sources and
// written by abctl serve.
type WireLive struct {
	Name        string         `json:"name"`
	Position    int            `json:"position"`
	Description string         `json:"description"`
	Config      map[string]any `json:"config"`
}

// wireDoc is either endpoint's document; which keys are present says which.
type wireDoc struct {
	Plugins  *[]WirePlugin `json:"plugins"`
	Inbound  *[]WireLive   `json:"inbound"`
	Outbound *[]WireLive   `json:"outbound"`
}

func (s *urlSource) Load(ctx context.Context) ([]Descriptor, []Note, error) {
	body, err := s.fetch(ctx)
	if err != nil {
		return nil, nil, &ReadError{Source: s.spec, Err: err}
	}
	// Unknown fields are allowed: gateways add fields over time, and a
	// catalog browser should not break on that.
	var doc wireDoc
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, readErr(s.spec, "malformed answer from %s: %v; want JSON {\"plugins\":[…]} or {\"inbound\":[…],\"outbound\":[…]}", s.url, err)
	}
	if dec.More() {
		return nil, nil, readErr(s.spec, "malformed answer from %s: data after the JSON document", s.url)
	}
	origin := Origin{Kind: OriginURL, Source: s.spec, URL: s.url}
	switch {
	case doc.Plugins != nil:
		out := make([]Descriptor, 0, len(*doc.Plugins))
		for _, p := range *doc.Plugins {
			d := Descriptor{
				Name:        p.Name,
				Description: p.Description,
				Version:     p.Version,
				Families:    []string{family.Pipeline},
				Capabilities: &Capabilities{
					ReadsBody:          p.ReadsBody,
					WritesRequestBody:  p.WritesRequestBody,
					WritesResponseBody: p.WritesResponseBody,
					Requires:           p.Requires,
					RequiresAny:        p.RequiresAny,
				},
				Origin: origin,
			}
			if len(p.Fields) > 0 {
				d.Config = &gateway.ConfigSchema{Fields: p.Fields}
			}
			out = append(out, d)
		}
		return out, nil, nil
	case doc.Inbound != nil || doc.Outbound != nil:
		return liveDescriptors(doc, origin), nil, nil
	}
	return nil, nil, readErr(s.spec, "answer from %s is neither a plugin list {\"plugins\":[…]} nor a live chain {\"inbound\":[…],\"outbound\":[…]}", s.url)
}

// liveDescriptors merges a live chain into one descriptor per name, each
// listing where it runs.
func liveDescriptors(doc wireDoc, origin Origin) []Descriptor {
	byName := map[string]int{}
	var out []Descriptor
	add := func(dir string, entries *[]WireLive) {
		if entries == nil {
			return
		}
		for _, e := range *entries {
			i, ok := byName[e.Name]
			if !ok {
				i = len(out)
				byName[e.Name] = i
				out = append(out, Descriptor{Name: e.Name, Description: e.Description, Families: []string{family.Pipeline}, Origin: origin})
			}
			out[i].Live = append(out[i].Live, LiveEntry{Direction: dir, Position: e.Position, Config: e.Config})
		}
	}
	add("inbound", doc.Inbound)
	add("outbound", doc.Outbound)
	for i := range out {
		slices.SortStableFunc(out[i].Live, func(a, b LiveEntry) int {
			if a.Direction != b.Direction {
				if a.Direction < b.Direction {
					return -1
				}
				return 1
			}
			return a.Position - b.Position
		})
	}
	return out
}

// fetch gets the endpoint within the time and size limits.
func (s *urlSource) fetch(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.fetchURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, s.limitErr(ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("this gateway serves no plugin catalog (HTTP 404 from %s); check the URL, or list the plugins with --source file:PATH", s.url)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("gateway answered %s from %s", resp.Status, s.url)
	case resp.ContentLength > s.maxBytes:
		return nil, &limits.Error{File: s.url, Limit: "url: answer size", Max: s.maxBytes, Got: resp.ContentLength, Unit: "bytes", Env: s.env, Fix: "the gateway's catalog is larger than a catalog should be; save it with curl and split it into file: sources"}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBytes+1))
	if err != nil {
		return nil, s.limitErr(ctx, err)
	}
	if int64(len(body)) > s.maxBytes {
		return nil, &limits.Error{File: s.url, Limit: "url: answer size", Max: s.maxBytes, Got: -1, Unit: "bytes", Env: s.env, Fix: "the gateway's catalog is larger than a catalog should be; save it with curl and split it into file: sources"}
	}
	return body, nil
}

func (s *urlSource) limitErr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer from %s within the time limit of %s", s.url, s.timeout)
	}
	return fmt.Errorf("fetch %s: %w", s.url, err)
}

func humanBytes(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
