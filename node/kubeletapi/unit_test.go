package kubeletapi

import (
	"reflect"
	"testing"
)

func TestSubresourcesFor(t *testing.T) {
	for path, want := range map[string][]string{
		"/stats":            {"stats"},
		"/stats/summary":    {"stats"},
		"/statsfoo":         {"proxy"},
		"/metrics":          {"metrics"},
		"/metrics/probes":   {"metrics"},
		"/metricsx":         {"proxy"},
		"/logs/":            {"log"},
		"/checkpoint/a/b/c": {"checkpoint"},
		"/pods":             {"pods", "proxy"},
		"/pods/":            {"pods", "proxy"},
		"/runningpods/":     {"pods", "proxy"},
		"/healthz":          {"healthz", "proxy"},
		"/configz":          {"configz", "proxy"},
		"/flagz":            {"configz"},
		"/statusz":          {"statusz"},
		"/spec":             {"proxy"},
		"/exec/a/b/c":       {"proxy"},
		"/":                 {"proxy"},
	} {
		if got := subresourcesFor(path); !reflect.DeepEqual(got, want) {
			t.Errorf("subresourcesFor(%q) = %q; want %q", path, got, want)
		}
	}
}
