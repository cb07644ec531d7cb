// Package junit writes JUnit XML, the test report form CI systems read
// (Jenkins, GitLab, GitHub's test reporters): one <testsuites> root, a
// <testsuite> per group and a <testcase> per test, failing, erroring,
// skipped or passing. Both of abkit's report writers (conformance's and
// replay's) use it, so their reports read alike in CI.
package junit

import (
	"encoding/xml"
	"io"
	"strconv"
	"time"
)

// Suites is the document root. Name and the totals are optional: a zero
// value leaves its attribute out.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr,omitempty"`
	Tests    int      `xml:"tests,attr,omitempty"`
	Failures int      `xml:"failures,attr,omitempty"`
	Errors   int      `xml:"errors,attr,omitempty"`
	Skipped  int      `xml:"skipped,attr,omitempty"`
	Time     string   `xml:"time,attr,omitempty"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one group of cases. Its counts are always written: a reader
// takes a missing count for an unknown one, not for zero.
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
	Cases    []Case `xml:"testcase"`
}

// Case is one test. At most one of Failure, Error and Skipped is set; none
// means it passed.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Message `xml:"failure,omitempty"`
	Error     *Message `xml:"error,omitempty"`
	Skipped   *Message `xml:"skipped,omitempty"`
	SystemErr string   `xml:"system-err,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Message is a failure, an error or a skip: a one-line message, an
// optional type and the whole text.
type Message struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// Add appends c to s and counts it.
func (s *Suite) Add(c Case) {
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

// Total sums the suites' counts into the root's.
func (r *Suites) Total() {
	r.Tests, r.Failures, r.Errors, r.Skipped = 0, 0, 0, 0
	for _, s := range r.Suites {
		r.Tests += s.Tests
		r.Failures += s.Failures
		r.Errors += s.Errors
		r.Skipped += s.Skipped
	}
}

// Seconds is a JUnit time: seconds to the microsecond, since a case can
// take well under a millisecond and "0.000" would read as not measured.
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64)
}

// Write writes r as an indented XML document with its header.
func Write(w io.Writer, r Suites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
