package kubeletapi

import (
	"reflect"
	"testing"
	"time"
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

func TestTTLCache(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	c := newTTLCache[int](clock.Now, 2)
	c.put("a", 1, time.Minute)
	c.put("b", 2, time.Second)
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Errorf("get a = %v, %v", v, ok)
	}
	clock.Advance(time.Second)
	if _, ok := c.get("b"); ok {
		t.Error("b outlived its TTL")
	}
	// Full: the expired b makes room for c, a stays.
	c.put("c", 3, time.Minute)
	if _, ok := c.get("a"); !ok {
		t.Error("a was evicted while b had expired")
	}
	// Full with nothing expired: something goes, the size stays bounded.
	c.put("d", 4, time.Minute)
	if len(c.entries) > 2 {
		t.Errorf("%d entries; want at most 2", len(c.entries))
	}
	if v, ok := c.get("d"); !ok || v != 4 {
		t.Errorf("get d = %v, %v", v, ok)
	}
}
