// Package probe runs a container's Kubernetes probes (startup, liveness,
// readiness) and lifecycle hooks (postStart, preStop) with the upstream
// kubelet's semantics.
//
// # Pieces
//
//   - Runner carries out one probe (Runner.Probe) or one hook
//     (Runner.Hook): exec through the CRI's ExecSync, httpGet, tcpSocket,
//     grpc (grpc.health.v1), and the sleep hook.
//   - Worker repeats one probe of one container on a schedule and applies
//     the thresholds; it reports only changes of the thresholded result.
//   - Manager owns the workers of one pod: Sync starts and stops them as
//     containers start, finish their startup probe, and go away.
//
// # Semantics (kubelet 1.37 unless noted)
//
//   - Probe defaults: periodSeconds 10, timeoutSeconds 1,
//     successThreshold 1, failureThreshold 3, initialDelaySeconds 0.
//   - Initial results: readiness Failure, liveness Success, startup
//     Unknown. The initial result is not reported; the first thresholded
//     result is, whatever it is. A startup worker ends after its first
//     Success; liveness and startup workers go on hold (end) after
//     reporting Failure, as the kubelet does until it sees a new container
//     ID.
//   - A probe whose outcome is unknown (e.g. ExecSync failed for another
//     reason than a timeout) is thrown away: it neither counts towards a
//     threshold nor resets one, as in the kubelet.
//   - httpGet: the host defaults to the pod IP; HTTPS skips certificate
//     verification; User-Agent "kube-probe/1.37" and Accept "*/*" unless
//     the probe sets them; status 200..399 is Success; redirects are
//     followed only to the same host (a redirect elsewhere ends the probe
//     with Success, "Probe terminated redirects", as the kubelet's
//     Warning); the body is read up to 10 KiB; connections are not kept
//     alive and no proxy is used.
//   - Pod IP: Target.PodIP. A hostNetwork pod whose PodIP is empty is
//     probed on 127.0.0.1; another pod without an IP fails its network
//     probes.
//
// Deliberate differences from the kubelet: a hook's httpGet answered with
// a status outside 200..399 is an error (the kubelet ignores the status);
// the first probe runs exactly initialDelaySeconds after the container
// started (the kubelet runs it at the first period tick after that); the
// kubelet's jitter after its own restart is not simulated.
package probe
