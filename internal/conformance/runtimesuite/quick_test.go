package runtimesuite

import (
	"context"
	"os"
	"testing"

	"github.com/abkit/abkit/internal/conformance"
)

func TestQuickReference(t *testing.T) {
	bin := os.Getenv("RT_BIN")
	if bin == "" {
		t.Skip()
	}
	rep, err := conformance.Run(context.Background(), Suite(), Launcher{Path: bin}, conformance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	conformance.WriteText(os.Stdout, rep, false, false)
}
