package junit_test

import (
	"os"
	"time"

	"github.com/abkit/abkit/internal/junit"
)

// A suite counts what it is given; the root sums its suites.
func Example() {
	s := junit.Suite{Name: "replay", Time: junit.Seconds(1500 * time.Microsecond)}
	s.Add(junit.Case{Name: "ok", Classname: "replay", Time: junit.Seconds(time.Millisecond)})
	s.Add(junit.Case{Name: "bad", Classname: "replay", Time: junit.Seconds(500 * time.Microsecond),
		Failure: &junit.Message{Message: "trace differs", Body: "trace differs\n-a\n+b"}})
	root := junit.Suites{Name: "abkit", Suites: []junit.Suite{s}}
	root.Total()
	_ = junit.Write(os.Stdout, root)
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <testsuites name="abkit" tests="2" failures="1">
	//   <testsuite name="replay" tests="2" failures="1" errors="0" skipped="0" time="0.001500">
	//     <testcase name="ok" classname="replay" time="0.001000"></testcase>
	//     <testcase name="bad" classname="replay" time="0.000500">
	//       <failure message="trace differs">trace differs&#xA;-a&#xA;+b</failure>
	//     </testcase>
	//   </testsuite>
	// </testsuites>
}
