package app

import (
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/node/admit"
)

// osReleaseFile is the running kernel's release, as the kubelet reads it.
const osReleaseFile = "/proc/sys/kernel/osrelease"

// sysctlAdmission is the admitter of pods' sysctls: the safe sysctls of the
// running kernel and --allowed-unsafe-sysctls (allowedUnsafeSysctls), as
// the kubelet joins them. An invalid pattern is an error at start, as in
// the kubelet.
func sysctlAdmission(allowedUnsafe []string, log *zap.Logger) (*admit.Sysctls, error) {
	release, err := os.ReadFile(osReleaseFile)
	if err != nil {
		log.Warn("Cannot read the kernel's release; only the sysctls namespaced on every kernel are safe", zap.Error(err))
	}
	s, err := admit.NewSysctls(append(admit.SafeSysctls(string(release)), allowedUnsafe...)...)
	if err != nil {
		return nil, fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}
	return s, nil
}
