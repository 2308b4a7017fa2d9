// Command junitsum prints what a ginkgo JUnit report (e2e.test
// --ginkgo.junit-report) says: how many specs passed, failed and were
// skipped, and the name and first message line of every failed spec.
//
//	junitsum _out/conformance/actorlet-20261205-1400/junit.xml
//
// It exits 1 when a spec failed, 2 when the report cannot be read.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: junitsum JUNIT.xml")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "junitsum:", err)
		os.Exit(2)
	}
	defer f.Close()
	s, err := summarize(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "junitsum: %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	s.print(os.Stdout)
	if len(s.failed) > 0 {
		os.Exit(1)
	}
}
