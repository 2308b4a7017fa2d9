// Package kubeletconfig loads a KubeletConfiguration file
// (kubelet.config.k8s.io/v1beta1, the kubelet's --config) for actorlet.
//
// actorlet honours a subset of the kubelet's fields, listed by [Supported].
// [Load] decodes the whole type strictly, so a misspelt field is an error as
// it is for the kubelet, but reports the fields that are set and not honoured
// so the caller can log them once. Unset supported fields get the kubelet's
// defaults ([Defaults]); relative staticPodPath, podLogsDir and resolvConf
// are resolved against the directory of the file, as the kubelet does.
package kubeletconfig
