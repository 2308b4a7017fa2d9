package sim

import (
	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/faults"
)

// Exit code and reason of a container whose process was gone when the
// runtime came back (containerd's unknownExitCode and unknownExitReason).
const (
	exitCodeUnknown = 255
	reasonUnknown   = "Unknown"
)

// Restart does to the runtime's state what a restart in the given mode
// does (see faults.RestartMode), and ends every GetContainerEvents stream
// with Unavailable:
//   - keep (a containerd restart, shims alive): nothing else changes;
//     running containers go on and scripted exits still happen.
//   - reboot (the machine rebooted; containerd recovered): every running
//     container is EXITED with exit code 255 and reason "Unknown" at this
//     instant, every sandbox NOTREADY with its IP released; CREATED and
//     EXITED containers, names and images stay.
//   - wipe (the runtime lost its state): every sandbox and container is
//     gone, their names and IPs free; images stay.
//
// No events are emitted for these changes: subscribers are cut first, as
// a real runtime's are, and must list to learn what changed. Misuse
// records (Info.Violations) survive. A client that creates or starts a
// container in a sandbox a reboot made NOTREADY is refused
// (FailedPrecondition) but commits no misuse: it could not know yet. Restart is what the fault injector of
// Options.Faults calls; calling it directly restarts on demand (the
// injector's Restart also cuts calls in flight and applies a downtime).
// An unknown mode is treated as keep.
func (r *Runtime) Restart(mode faults.RestartMode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.events.disconnect()
	r.restarts++
	switch mode {
	case faults.RestartReboot:
		now := r.now()
		for _, sb := range r.sortedSandboxesLocked() {
			for _, c := range sb.sortedContainers() {
				if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
					r.exitLocked(c, exitPlan{at: now, code: exitCodeUnknown, reason: reasonUnknown, message: "the machine rebooted (simulated)"})
				}
			}
			if sb.ready {
				r.stopSandboxLocked(sb)
				sb.rebooted = true
			}
		}
	case faults.RestartWipe:
		for _, sb := range r.sortedSandboxesLocked() {
			r.removeSandboxLocked(sb)
		}
	}
	r.log.Info("simulated runtime restarted", zap.String("mode", string(mode)),
		zap.Int("sandboxes", len(r.sandboxes)), zap.Int("containers", len(r.containers)), zap.Int("running", r.running))
}

// sortedSandboxesLocked returns all sandboxes, oldest first. r.mu must be held.
func (r *Runtime) sortedSandboxesLocked() []*sandbox {
	out := make([]*sandbox, 0, len(r.sandboxes))
	for _, sb := range r.sandboxes {
		out = append(out, sb)
	}
	sortSandboxes(out)
	return out
}
