package catalog

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newLocalServer starts a real HTTP server on 127.0.0.1.
func newLocalServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

const pluginList = `{"plugins":[
 {"name":"tool-allowlist","description":"Rejects tool calls not on the list","readsBody":false,
  "requires":["mcp-parser"],"fields":[{"name":"allow","type":"array","required":true,"description":"tool names"}]},
 {"name":"mcp-parser","description":"Parses MCP","readsBody":true,"extra":"ignored"}
]}`

const liveChain = `{"inbound":[{"name":"mcp-parser","position":0,"description":"Parses MCP"},
 {"name":"tool-allowlist","position":1,"description":"Rejects tool calls","config":{"allow":["search"]}}],
 "outbound":[{"name":"mcp-parser","position":0,"description":"Parses MCP"}]}`

func TestURLSource(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/plugins", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(pluginList)) })
	mux.HandleFunc("/chain", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(liveChain)) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"plugins":[`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"plugins":[{"name":"x","description":"` + strings.Repeat("y", 4096) + `"}]}`))
	})
	mux.HandleFunc("/bigdeclared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "999999")
		w.Write([]byte(`{}`))
	})
	mux.HandleFunc("/malformed", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"plugins":[{"name":`)) })
	mux.HandleFunc("/neither", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"hello":1}`)) })
	mux.HandleFunc("/boom", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	srv := newLocalServer(t, mux)
	opts := Options{URLTimeout: 300 * time.Millisecond, URLMaxBytes: 1024}

	t.Run("plugin list", func(t *testing.T) {
		c, err := Load(context.Background(), []string{"url:" + srv.URL + "/plugins"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"mcp-parser", "tool-allowlist"}, c.Names()); diff != "" {
			t.Fatalf("names (-want +got):\n%s", diff)
		}
		d, _ := c.Lookup("tool-allowlist")
		if d.Capabilities == nil || d.Capabilities.Requires[0] != "mcp-parser" || d.Config == nil || d.Config.Fields[0].Name != "allow" || !d.Config.Fields[0].Required {
			t.Errorf("tool-allowlist = %+v", d)
		}
		if d.Origin.Kind != OriginURL || d.Origin.URL != srv.URL+"/plugins" {
			t.Errorf("origin = %+v", d.Origin)
		}
		if fs := Lint(c); len(fs) != 0 {
			t.Errorf("lint: %v", fs)
		}
	})
	t.Run("live chain", func(t *testing.T) {
		c, err := Load(context.Background(), []string{"url:" + srv.URL + "/chain"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := c.Lookup("mcp-parser")
		if diff := cmp.Diff([]LiveEntry{{Direction: "inbound"}, {Direction: "outbound"}}, d.Live); diff != "" {
			t.Errorf("live (-want +got):\n%s", diff)
		}
		d, _ = c.Lookup("tool-allowlist")
		if len(d.Live) != 1 || d.Live[0].Position != 1 || d.Live[0].Config["allow"] == nil {
			t.Errorf("tool-allowlist live = %+v", d.Live)
		}
	})

	errCases := []struct{ path, want string }{
		{"/missing", "this gateway serves no plugin catalog"},
		{"/slow", "within the time limit of 300ms"},
		{"/big", "is over the limit of 1 KiB"},
		{"/bigdeclared", "999999 bytes, over the limit of 1 KiB"},
		{"/malformed", "malformed answer"},
		{"/neither", "neither a plugin list"},
		{"/boom", "500 Internal Server Error"},
	}
	for _, tc := range errCases {
		t.Run(tc.path, func(t *testing.T) {
			start := time.Now()
			_, err := Load(context.Background(), []string{"url:" + srv.URL + tc.path}, opts)
			var re *ReadError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *ReadError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
			if el := time.Since(start); el > 30*time.Second {
				t.Errorf("took %s; the time limit did not hold (a hang guard: the message names the limit)", el)
			}
		})
	}
}

func TestURLSourceBadSpec(t *testing.T) {
	for _, s := range []string{"url:ftp://x", "url:nohost", "dir:", "nope:x", "builtin:x"} {
		if _, err := Load(context.Background(), []string{s}, Options{}); !errors.Is(err, ErrBadSource) {
			t.Errorf("%s: err = %v, want ErrBadSource", s, err)
		}
	}
}

func TestURLDefaults(t *testing.T) {
	s, err := newURLSource("url:http://x/p", "http://x/p", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.timeout != 10*time.Second || s.maxBytes != 4<<20 {
		t.Errorf("defaults = %s, %d; want 10s and 4 MiB", s.timeout, s.maxBytes)
	}
}

// Credentials in a url: source are sent to the gateway and printed
// nowhere: not in errors, the origin or the spec.
func TestURLSourceRedactsCredentials(t *testing.T) {
	var gotAuth, gotQuery string
	srv := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		gotAuth, gotQuery = u+":"+p, r.URL.Query().Get("token")
		w.WriteHeader(http.StatusInternalServerError)
	}))
	spec := "url:http://bob:PASSWORD1@" + strings.TrimPrefix(srv.URL, "http://") + "/plugins?token=QUERYTOKEN2"
	src, err := ParseSource(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = src.Load(context.Background())
	if err == nil {
		t.Fatal("want an error for HTTP 500")
	}
	if gotAuth != "bob:PASSWORD1" || gotQuery != "QUERYTOKEN2" {
		t.Errorf("gateway got auth %q token %q: credentials must still be sent", gotAuth, gotQuery)
	}
	for _, s := range []string{err.Error(), src.Spec()} {
		if strings.Contains(s, "PASSWORD1") || strings.Contains(s, "QUERYTOKEN2") {
			t.Errorf("credential printed: %q", s)
		}
	}
}
