//go:build !unix

package netlimit

func rlimitNoFile() (uint64, bool) { return 0, false }
