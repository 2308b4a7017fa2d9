// Package faults injects seeded, reproducible faults into a CRI v1 server:
// the simulated runtime (cri/sim, Options.Faults) and `actorlet cri-proxy`
// in front of any real runtime use the same Plan and the same Injector.
//
// # Plan files
//
// A Plan is read from YAML or JSON (Load, Parse; unknown fields and
// unknown method names are errors). Rates are probabilities in [0, 1];
// durations are Go duration strings; codes are gRPC code names.
//
//	rpcs:
//	  "*":                     # every method without its own entry
//	    error: 0.02            # fail before the runtime sees the call (no effect)
//	    errorAfter: 0.01       # the call takes effect, its reply becomes the error
//	    codes: [Unavailable, DeadlineExceeded, Internal]   # one chosen per failure
//	    hang: 0.003            # no effect; held until the caller's deadline or cancel
//	    hangAfter: 0.003       # takes effect; reply withheld until the caller gives up
//	    latency:               # waited before the call
//	      distribution: lognormal   # fixed (value) | uniform (min, max) |
//	      median: 1ms               # exponential (mean, max) | lognormal (median, sigma, max)
//	      sigma: 1
//	      max: 250ms                # a cap, for exponential and lognormal
//	      rate: 1                   # share of calls delayed (default 1)
//	  PullImage:               # replaces "*" for this method (no inheritance)
//	    error: 0.15
//	    codes: [Unavailable, Unknown, ResourceExhausted]
//	events:                    # per event of a GetContainerEvents stream
//	  drop: 0.02
//	  duplicate: 0.02
//	  reorder: 0.02            # sent after the next event, or after reorderWindow
//	  reorderWindow: 500ms     # default 1s
//	  break: 0.005             # the stream ends with Unavailable instead
//	restart:
//	  rate: 0.002              # per call, over all methods
//	  atCalls: [500]           # and at these calls (numbered from 0, over all methods)
//	  mode: keep               # keep | reboot | wipe (see RestartMode)
//	  downtime: 1s             # calls refused with Unavailable meanwhile
//
// The faults of one call (error, errorAfter, hang, hangAfter) exclude each
// other; latency is drawn on its own. For GetContainerEvents, error, hang
// and latency apply when the stream opens, errorAfter breaks it at its
// first event, hangAfter keeps it open and silent.
//
// Presets: "none" (nothing) and "default" (presets/default.yaml: all kinds
// at rates a correct node agent rides out; restarts in mode keep, so that
// it suits a proxy too).
//
// # Determinism
//
// Every decision comes from its own random source derived from the seed, a
// key and a counter (see DecideCall, DecideEvent, DecideRestart): the n-th
// call of a method gets the same fault in every run with the same seed,
// whatever the other methods' calls do. With concurrent callers, which call
// is the n-th depends on scheduling; a deterministic driver makes it fixed.
// Latencies, downtimes and the reorder window run on an injected clock.
//
// # Counting
//
// Every injected fault is counted by Kind and method (Injector.Counts,
// Totals, and a Prometheus Collector for
// actorlet_cri_faults_injected_total{kind,method}) and logged at debug
// level.
package faults
