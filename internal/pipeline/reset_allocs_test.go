//go:build !race

package pipeline

import (
	"context"
	"net/http"
	"testing"
)

// TestResetAllocs: a whole one-plugin exchange on a reused exchange
// allocates nothing for the exchange state (the race detector allocates
// on its own, hence the build tag).
func TestResetAllocs(t *testing.T) {
	c := benchChain(1, false)
	up := Upstream{Status: 200, Header: http.Header{}, Body: []byte(`{}`)}
	ctx := context.Background()
	x := c.NewExchange(benchReq, ExchangeOptions{})
	x.Finish()
	n := testing.AllocsPerRun(100, func() {
		if !x.Reset(benchReq, ExchangeOptions{}) {
			t.Fatal("Reset refused")
		}
		if x.Request(ctx) {
			x.Respond(ctx, up)
		}
		x.Finish()
	})
	if n != 0 {
		t.Errorf("a reused exchange: %v allocations, want 0", n)
	}
}
