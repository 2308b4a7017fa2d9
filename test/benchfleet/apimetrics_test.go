package main

import (
	"strings"
	"testing"
)

const exposition = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 12
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 10000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 3.5e+04
# HELP apiserver_request_duration_seconds Response latency distribution.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{verb="GET",le="0.1"} 7
apiserver_request_duration_seconds_bucket{verb="GET",le="+Inf"} 9
apiserver_request_duration_seconds_sum{verb="GET"} 0.5
apiserver_request_duration_seconds_count{verb="GET"} 9
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 99
`

func TestSumCounter(t *testing.T) {
	got, err := sumCounter(strings.NewReader(exposition), requestTotal)
	if err != nil {
		t.Fatal(err)
	}
	if want := 12.0 + 10000 + 35000; got != want {
		t.Errorf("sum %v, want %v", got, want)
	}
}

func TestSumCounterMissing(t *testing.T) {
	got, err := sumCounter(strings.NewReader(exposition), "no_such_total")
	if err != nil || got != 0 {
		t.Errorf("sum of a missing counter: %v, %v; want 0, nil", got, err)
	}
}

func TestSumCounterMalformed(t *testing.T) {
	if _, err := sumCounter(strings.NewReader("apiserver_request_total{code=\"200\" 12\n"), requestTotal); err == nil {
		t.Error("no error for a malformed exposition")
	}
}
