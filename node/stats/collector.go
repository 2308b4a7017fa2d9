package stats

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// SummaryProvider gives the CPU and memory summary the resource collector exports
// (Provider.Summary).
type SummaryProvider interface {
	Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error)
}

// Descriptions of the kubelet's /metrics/resource metrics: same names, labels and types.
var (
	nodeCPUDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative CPU time consumed by the node, in core-seconds.", nil, nil)
	nodeMemoryDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node, in bytes.", nil, nil)
	containerCPUDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative CPU time consumed by the container, in core-seconds.", []string{"container", "pod", "namespace"}, nil)
	containerMemoryDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container, in bytes.", []string{"container", "pod", "namespace"}, nil)
	containerStartDesc = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since the Unix epoch, in seconds.", []string{"container", "pod", "namespace"}, nil)
	podCPUDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative CPU time consumed by the pod, in core-seconds.", []string{"pod", "namespace"}, nil)
	podMemoryDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod, in bytes.", []string{"pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise (deprecated: see resource_scrape_error).", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise.", nil, nil)
)

// DefaultScrapeTimeout bounds one collection of the resource collector.
const DefaultScrapeTimeout = time.Minute

// ResourceCollector exports a CPU-and-memory summary as the kubelet's /metrics/resource does:
// node, container and pod CPU time and working set, stamped with the time of their sample,
// container start times, and scrape_error and resource_scrape_error (1 when the summary
// failed; then nothing else is exported). Only what exists at scrape time is exported, so
// removed containers leave no series behind.
type ResourceCollector struct {
	src     SummaryProvider
	timeout time.Duration
	log     *zap.Logger
}

// NewResourceCollector returns a collector over src. Each collection asks src for a summary
// under a deadline of DefaultScrapeTimeout; failures are logged to log (nil: not logged).
func NewResourceCollector(src SummaryProvider, log *zap.Logger) *ResourceCollector {
	if log == nil {
		log = zap.NewNop()
	}
	return &ResourceCollector{src: src, timeout: DefaultScrapeTimeout, log: log}
}

var _ prometheus.Collector = (*ResourceCollector)(nil)

// Describe implements prometheus.Collector.
func (c *ResourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUDesc, nodeMemoryDesc, containerStartDesc, containerCPUDesc,
		containerMemoryDesc, podCPUDesc, podMemoryDesc, scrapeErrorDesc, resourceScrapeErrorDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *ResourceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	failed := 0.0
	defer func() {
		ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
		ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, failed)
	}()
	s, err := c.src.Summary(ctx, true)
	if err != nil {
		failed = 1
		c.log.Warn("resource metrics: no summary", zap.Error(err))
		return
	}
	n := s.Node
	if n.CPU != nil && n.CPU.UsageCoreNanoSeconds != nil {
		ch <- at(n.CPU.Time.Time, prometheus.MustNewConstMetric(nodeCPUDesc, prometheus.CounterValue, seconds(*n.CPU.UsageCoreNanoSeconds)))
	}
	if n.Memory != nil && n.Memory.WorkingSetBytes != nil {
		ch <- at(n.Memory.Time.Time, prometheus.MustNewConstMetric(nodeMemoryDesc, prometheus.GaugeValue, float64(*n.Memory.WorkingSetBytes)))
	}
	for _, p := range s.Pods {
		pod, ns := p.PodRef.Name, p.PodRef.Namespace
		for _, ct := range p.Containers {
			if ct.StartTime.Unix() > 0 {
				ch <- prometheus.MustNewConstMetric(containerStartDesc, prometheus.GaugeValue,
					float64(ct.StartTime.UnixNano())/float64(time.Second), ct.Name, pod, ns)
			}
			if ct.CPU != nil && ct.CPU.UsageCoreNanoSeconds != nil {
				ch <- at(ct.CPU.Time.Time, prometheus.MustNewConstMetric(containerCPUDesc, prometheus.CounterValue,
					seconds(*ct.CPU.UsageCoreNanoSeconds), ct.Name, pod, ns))
			}
			if ct.Memory != nil && ct.Memory.WorkingSetBytes != nil {
				ch <- at(ct.Memory.Time.Time, prometheus.MustNewConstMetric(containerMemoryDesc, prometheus.GaugeValue,
					float64(*ct.Memory.WorkingSetBytes), ct.Name, pod, ns))
			}
		}
		if p.CPU != nil && p.CPU.UsageCoreNanoSeconds != nil {
			ch <- at(p.CPU.Time.Time, prometheus.MustNewConstMetric(podCPUDesc, prometheus.CounterValue,
				seconds(*p.CPU.UsageCoreNanoSeconds), pod, ns))
		}
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			ch <- at(p.Memory.Time.Time, prometheus.MustNewConstMetric(podMemoryDesc, prometheus.GaugeValue,
				float64(*p.Memory.WorkingSetBytes), pod, ns))
		}
	}
}

// at stamps m with t, the time of its sample, as the kubelet does.
func at(t time.Time, m prometheus.Metric) prometheus.Metric {
	if t.IsZero() {
		return m
	}
	return prometheus.NewMetricWithTimestamp(t, m)
}

func seconds(ns uint64) float64 { return float64(ns) / float64(time.Second) }
