package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// requestTotal is the API server's counter of the requests it served, by
// verb, resource, code and more.
const requestTotal = "apiserver_request_total"

// sumCounter sums every series of the counter name in a Prometheus text
// exposition; a counter that is missing sums to 0.
func sumCounter(r io.Reader, name string) (float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return 0, fmt.Errorf("parse metrics: %w", err)
	}
	var sum float64
	for _, m := range families[name].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum, nil
}

// apiRequests reads the API server's /metrics with cfg's identity and sums
// apiserver_request_total.
func apiRequests(ctx context.Context, cfg *rest.Config) (float64, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, fmt.Errorf("client of %s: %w", cfg.Host, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/metrics", nil)
	if err != nil {
		return 0, fmt.Errorf("request of %s/metrics: %w", cfg.Host, err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("get %s/metrics: %w", cfg.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("get %s/metrics: %s", cfg.Host, resp.Status)
	}
	n, err := sumCounter(resp.Body, requestTotal)
	if err != nil {
		return 0, fmt.Errorf("%s/metrics: %w", cfg.Host, err)
	}
	return n, nil
}
