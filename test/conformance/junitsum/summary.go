package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// ErrNoSpecs is returned for a report that holds no test case at all (e2e.test
// died before its suite ran, or the file is not a JUnit report).
var ErrNoSpecs = errors.New("no test cases in the report")

// summary is the outcome of one run. Ginkgo's suite nodes
// ([SynchronizedBeforeSuite], [ReportAfterSuite], ...) are counted apart from
// specs, but a failed one is listed among the failures.
type summary struct {
	passed, skipped int
	failed          []failure
	suiteNodes      int
}

type failure struct{ name, message string }

// suiteNodeName matches ginkgo's suite-level nodes: [BeforeSuite],
// [SynchronizedAfterSuite], [ReportAfterSuite] Kubernetes e2e suite report,
// [DeferCleanup (Suite)], ... (specs are "[It] ...").
var suiteNodeName = regexp.MustCompile(`^\[(\w*Suite|DeferCleanup \(Suite\))\]`)

type junitCase struct {
	Name    string `xml:"name,attr"`
	Status  string `xml:"status,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

// summarize reads a JUnit document (testsuites > testsuite > testcase, or a
// bare testsuite) and classifies each case by ginkgo's status attribute, or by
// its failure/error/skipped elements when there is none.
func summarize(r io.Reader) (summary, error) {
	var s summary
	dec := xml.NewDecoder(r)
	n := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s, fmt.Errorf("parse: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "testcase" {
			continue
		}
		var c junitCase
		if err := dec.DecodeElement(&c, &se); err != nil {
			return s, fmt.Errorf("parse testcase %d: %w", n+1, err)
		}
		n++
		s.add(c)
	}
	if n == 0 {
		return s, ErrNoSpecs
	}
	return s, nil
}

func (s *summary) add(c junitCase) {
	status := c.Status
	if status == "" {
		switch {
		case c.Failure != nil || c.Error != nil:
			status = "failed"
		case c.Skipped != nil:
			status = "skipped"
		default:
			status = "passed"
		}
	}
	suiteNode := suiteNodeName.MatchString(c.Name)
	switch status {
	case "passed":
		if suiteNode {
			s.suiteNodes++
		} else {
			s.passed++
		}
	case "skipped", "pending":
		if suiteNode {
			s.suiteNodes++
		} else {
			s.skipped++
		}
	default: // failed, panicked, interrupted, aborted, timedout
		msg := ""
		switch {
		case c.Failure != nil && c.Failure.Message != "":
			msg = c.Failure.Message
		case c.Failure != nil:
			msg = c.Failure.Text
		case c.Error != nil:
			msg = c.Error.Message
		}
		msg = strings.TrimSpace(msg)
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		s.failed = append(s.failed, failure{name: strings.TrimPrefix(c.Name, "[It] "), message: status + ": " + msg})
	}
}

func (s summary) print(w io.Writer) {
	fmt.Fprintf(w, "passed %d, failed %d, skipped %d\n", s.passed, len(s.failed), s.skipped)
	for _, f := range s.failed {
		fmt.Fprintf(w, "FAILED %s\n    %s\n", f.name, f.message)
	}
}
