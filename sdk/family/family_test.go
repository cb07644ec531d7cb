package family

import (
	"slices"
	"testing"
)

func TestOf(t *testing.T) {
	if got := Of(false, false, false); got != nil {
		t.Errorf("Of(none) = %q, want nil", got)
	}
	if got, want := Of(true, false, true), []string{Pipeline, Hooks}; !slices.Equal(got, want) {
		t.Errorf("Of(P, H) = %q, want %q", got, want)
	}
	if got, want := Of(true, true, true), []string{Pipeline, Dispatch, Hooks}; !slices.Equal(got, want) {
		t.Errorf("Of(all) = %q, want %q", got, want)
	}
}
