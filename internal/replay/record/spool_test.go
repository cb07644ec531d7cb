package record

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// A body spilled to a temporary file has no name in --out while the
// exchange runs: a recorder killed with SIGKILL mid-exchange left 197
// .spool-* files (561 MiB) there for ever.
func TestSpoolFilesHaveNoName(t *testing.T) {
	inUpstream := make(chan struct{})
	release := make(chan struct{})
	up := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(inUpstream)
		<-release
		io.WriteString(w, `{"ok":true}`)
	}))
	dir := t.TempDir()
	p, err := New(up, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.memory = 1 // every body spills
	proxy := serveLoopback(t, p)
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(proxy+"/v1/json", "application/json", strings.NewReader(strings.Repeat("x", 1<<20)))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	<-inUpstream // the request body is spilled and the exchange in flight
	es, err := os.ReadDir(dir)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".spool-") {
			t.Errorf("spool file %s has a name in --out while in use", e.Name())
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p.Wait()
	if p.spilled.Load() == 0 {
		t.Fatal("nothing was spilled: the test did not test")
	}
}
