package runtimesuite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/testbin"

	"github.com/abkit/abkit/internal/conformance"
)

// impls are the reference and broken implementations, built once.
var impls []Impl

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "abkit-runtimesuite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	err = testbin.Build(context.Background(), dir, testbin.Packages...)
	if err == nil {
		impls, err = ImplsIn(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestSelftest is the acceptance test of the runtime suite: the reference
// runtime and the example plugins pass everything; each broken runtime is
// caught by a case citing its rule (P1 P6 P9 P16 P20 P21 P23 P26 P27 P28 D8
// D9 D13 D15 D18 D19 H3 H5; other cases observing the same bug may fail
// too); each broken plugin fails exactly its expected cases.
func TestSelftest(t *testing.T) {
	rows, err := Selftest(context.Background(), impls, hangGuard)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteTable(&b, rows)
	t.Log("\n" + b.String())
	for _, r := range rows {
		if !r.OK {
			t.Errorf("%s (%s): expected %s, caught by %v: %s\n%s", r.Impl.Name, r.Impl.Kind, r.Expected, r.CaughtBy, r.Problem, r.Details)
		}
	}
}

// hangGuard gives every case, handshake and call a bound that only a hang
// reaches: the verdicts must not depend on how busy the machine is, and
// the cases that are about time (P14, P28, D3, D20) carry their own
// deadlines.
var hangGuard = conformance.Options{Timeout: time.Minute, Host: pluginhost.Options{StartTimeout: time.Minute, CallTimeout: time.Minute}}
