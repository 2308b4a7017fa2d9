package sim

import (
	"strconv"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Environment variables of a container (ContainerConfig.envs) that script
// its simulated process. Invalid values make CreateContainer fail with
// InvalidArgument.
const (
	// EnvExitAfter (a Go duration, e.g. "30s", "0s") makes the process
	// exit that long after StartContainer. Unset: it runs until stopped.
	EnvExitAfter = "SIM_EXIT_AFTER"
	// EnvExitCode is the exit code of that exit (default 0).
	EnvExitCode = "SIM_EXIT_CODE"
	// EnvExitReason overrides the reason of that exit (default "Completed"
	// for code 0, else "Error"; e.g. "OOMKilled").
	EnvExitReason = "SIM_EXIT_REASON"
	// EnvStopExitCode is the exit code when the process ends on its own
	// after StopContainer's SIGTERM (default 0).
	EnvStopExitCode = "SIM_STOP_EXIT_CODE"
	// EnvStopDelay (a Go duration) is how long the process takes to end
	// after SIGTERM (default 0). If it exceeds StopContainer's timeout the
	// process is killed at the timeout: exit code 137, reason "Error".
	EnvStopDelay = "SIM_STOP_DELAY"
	// EnvExecExitCode is the exit code of every ExecSync (default 0).
	EnvExecExitCode = "SIM_EXEC_EXIT_CODE"

	// EnvHTTPPort makes the running container serve HTTP on <pod IP>:port
	// (only with a loopback pod IP, see probeserve.go): every GET is
	// answered with EnvHTTPStatus and EnvHTTPBody.
	EnvHTTPPort = "SIM_HTTP_PORT"
	// EnvHTTPStatus is the status of those answers (default 200).
	EnvHTTPStatus = "SIM_HTTP_STATUS"
	// EnvHTTPBody is the body of those answers (default empty).
	EnvHTTPBody = "SIM_HTTP_BODY"
	// EnvHTTPStatusFile names a file whose content (e.g. "500") is the
	// status, re-read per request; if it is missing or not a status,
	// EnvHTTPStatus applies. Runtime.SetHTTPStatus overrides both.
	EnvHTTPStatusFile = "SIM_HTTP_STATUS_FILE"
	// EnvTCPPort makes the running container accept TCP connections on
	// <pod IP>:port (closed at once; only with a loopback pod IP).
	EnvTCPPort = "SIM_TCP_PORT"
)

// AnnotationRunPodSandboxError is a pod annotation (the kubelet and
// actorlet copy a pod's annotations into its PodSandboxConfig) that makes
// every RunPodSandbox of the pod fail with gRPC code Unknown and the
// annotation's value as message, as a runtime whose CNI plugin or sandbox
// image fails does: a sandbox that can never be created, caused the same
// way for any node agent on the runtime.
const AnnotationRunPodSandboxError = "sim.actorlet.io/run-pod-sandbox-error"

// Exit codes and reasons, as containerd reports them.
const (
	exitCodeKilled  = 137 // 128 + SIGKILL
	reasonCompleted = "Completed"
	reasonError     = "Error"
)

// behaviour is what a container's SIM_* variables script. It never
// changes after CreateContainer, and containers without SIM_* variables
// share one (defaultBehaviour).
type behaviour struct {
	exitAfter    time.Duration
	exits        bool // EnvExitAfter was set
	exitCode     int32
	exitReason   string
	stopExitCode int32
	stopDelay    time.Duration
	execExitCode int32
	serve        serveSpec // EnvHTTPPort and friends
	catFiles     []string  // EnvCatFiles
}

// defaultBehaviour is the behaviour of a container without SIM_*
// variables: it runs until stopped, and ends at once with exit code 0.
var defaultBehaviour = behaviour{exitReason: reasonCompleted, serve: serveSpec{httpStatus: 200}}

func parseBehaviour(envs []*runtimeapi.KeyValue) (*behaviour, error) {
	var b behaviour
	scripted := false
	for _, kv := range envs {
		var err error
		v := string(kv.GetValue())
		switch kv.GetKey() {
		case EnvExitAfter:
			b.exits = true
			b.exitAfter, err = parseDuration(kv.GetKey(), v)
		case EnvExitCode:
			b.exitCode, err = parseCode(kv.GetKey(), v)
		case EnvExitReason:
			b.exitReason = v
		case EnvStopExitCode:
			b.stopExitCode, err = parseCode(kv.GetKey(), v)
		case EnvStopDelay:
			b.stopDelay, err = parseDuration(kv.GetKey(), v)
		case EnvExecExitCode:
			b.execExitCode, err = parseCode(kv.GetKey(), v)
		case EnvHTTPPort:
			b.serve.httpPort, err = parsePort(kv.GetKey(), v)
		case EnvTCPPort:
			b.serve.tcpPort, err = parsePort(kv.GetKey(), v)
		case EnvHTTPStatus:
			b.serve.httpStatus, err = parseStatus(kv.GetKey(), v)
		case EnvHTTPBody:
			b.serve.httpBody = v
		case EnvHTTPStatusFile:
			b.serve.statusFile = v
		case EnvCatFiles:
			b.catFiles, err = parseCatFiles(v)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		scripted = true
	}
	if !scripted {
		return &defaultBehaviour, nil
	}
	if b.exitReason == "" {
		b.exitReason = reasonFor(b.exitCode)
	}
	if b.serve.httpStatus == 0 {
		b.serve.httpStatus = 200
	}
	if b.serve.httpPort != 0 && b.serve.httpPort == b.serve.tcpPort {
		return nil, newErr(ErrInvalidArgument, "env %s and %s are both %d", EnvHTTPPort, EnvTCPPort, b.serve.httpPort)
	}
	return &b, nil
}

func parseDuration(key, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, newErr(ErrInvalidArgument, "env %s=%q: want a non-negative Go duration", key, v)
	}
	return d, nil
}

func parseCode(key, v string) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, newErr(ErrInvalidArgument, "env %s=%q: want an integer exit code", key, v)
	}
	return int32(n), nil
}

func reasonFor(code int32) string {
	if code == 0 {
		return reasonCompleted
	}
	return reasonError
}
