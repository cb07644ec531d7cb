// Command probe prints its own build info, for buildinfo's tests.
package main

import (
	"fmt"

	"github.com/abkit/abkit/internal/buildinfo"
)

func main() { fmt.Println(buildinfo.Read("", "", "").String()) }
