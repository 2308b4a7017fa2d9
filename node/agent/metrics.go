package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorlet/actorlet/journal"
)

// journalCollector exports the journal's counters.
type journalCollector struct {
	j                          *journal.Journal
	commits, records, requests *prometheus.Desc
}

func newJournalCollector(j *journal.Journal) prometheus.Collector {
	return &journalCollector{
		j:        j,
		commits:  prometheus.NewDesc("actorlet_journal_commits_total", "Write transactions (fsyncs) committed by the journal.", nil, nil),
		records:  prometheus.NewDesc("actorlet_journal_records_total", "Event records appended to the journal.", nil, nil),
		requests: prometheus.NewDesc("actorlet_journal_requests_total", "Append, snapshot and delete calls committed (requests/commits is the group-commit size).", nil, nil),
	}
}

func (c *journalCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.commits
	ch <- c.records
	ch <- c.requests
}

func (c *journalCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.j.Stats()
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(s.Commits))
	ch <- prometheus.MustNewConstMetric(c.records, prometheus.CounterValue, float64(s.Records))
	ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(s.Requests))
}
