package record

import (
	"os"

	"golang.org/x/sys/unix"
)

// groupSync: on Linux, fixtures' temporary files are written unsynced and
// made durable together by one syncfs of the output directory's file
// system.
const groupSync = true

func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
