// Command list prints the main packages `make test` prebuilds for the
// integration tests ([testbin.Packages]), space-separated, so that the
// Makefile reads the list rather than keep a copy of it:
//
//	go run ./internal/testbin/list
package main

import (
	"fmt"
	"strings"

	"github.com/abkit/abkit/internal/testbin"
)

func main() { fmt.Println(strings.Join(testbin.Packages, " ")) }
