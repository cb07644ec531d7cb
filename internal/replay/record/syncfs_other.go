//go:build !linux

package record

// groupSync: without syncfs, each fixture's temporary file is synced as it
// is written.
const groupSync = false

func syncFS(string) error { return nil }
