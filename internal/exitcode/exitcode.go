// Package exitcode carries a process exit code on an error, for the thin
// mains of abctl and conformance: commands return an *Error, and each
// program maps errors to its documented exit codes.
package exitcode

import "fmt"

// Error carries an exit code. A nil Err means the output already said
// everything (findings, a report), so the program prints nothing more.
type Error struct {
	Code int
	Err  error
	// Stands keeps Code after a signal: the command's normal end is the
	// signal (abctl record stops on Ctrl-C), and the error is the outcome
	// of that stop, not a consequence of being cut short.
	Stands bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
