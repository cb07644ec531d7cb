package exitcode

import (
	"errors"
	"io/fs"
	"testing"
)

func TestError(t *testing.T) {
	e := &Error{Code: 3, Err: fs.ErrNotExist}
	if e.Error() != fs.ErrNotExist.Error() || !errors.Is(e, fs.ErrNotExist) {
		t.Errorf("Error %q / Is: want the wrapped error's text and identity", e.Error())
	}
	var got *Error
	if !errors.As(error(e), &got) || got.Code != 3 {
		t.Errorf("errors.As lost the code")
	}
	if s := (&Error{Code: 1}).Error(); s != "exit 1" {
		t.Errorf("nil Err: %q, want %q", s, "exit 1")
	}
}
