package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorlet/actorlet/journal"
)

// journalCollector exports the journal's counters.
type journalCollector struct {
	j                          *journal.Journal
	commits, records, requests *prometheus.Desc
	failed, commitSeconds      *prometheus.Desc
}

func newJournalCollector(j *journal.Journal) prometheus.Collector {
	return &journalCollector{
		j:        j,
		commits:  prometheus.NewDesc("actorlet_journal_commits_total", "Write transactions (fsyncs) committed by the journal.", nil, nil),
		records:  prometheus.NewDesc("actorlet_journal_records_total", "Event records appended to the journal.", nil, nil),
		requests: prometheus.NewDesc("actorlet_journal_requests_total", "Append, snapshot and delete calls committed (requests/commits is the group-commit size).", nil, nil),
		failed:   prometheus.NewDesc("actorlet_journal_failed_commits_total", "Write transactions that failed (full disk, damaged file); each failed every request in it.", nil, nil),
		commitSeconds: prometheus.NewDesc("actorlet_journal_commit_seconds_total",
			"Time spent in write transactions, committed or failed, fsyncs included (divided by commits plus failed commits: the mean group commit).", nil, nil),
	}
}

func (c *journalCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.commits
	ch <- c.records
	ch <- c.requests
	ch <- c.failed
	ch <- c.commitSeconds
}

func (c *journalCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.j.Stats()
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(s.Commits))
	ch <- prometheus.MustNewConstMetric(c.records, prometheus.CounterValue, float64(s.Records))
	ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(s.Requests))
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(s.FailedCommits))
	ch <- prometheus.MustNewConstMetric(c.commitSeconds, prometheus.CounterValue, s.CommitTime.Seconds())
}
