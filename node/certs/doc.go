// Package certs obtains and renews the node's certificates through the
// Kubernetes certificates API, as the kubelet does (its TLS bootstrap,
// rotateCertificates and serverTLSBootstrap), on client-go's building blocks:
// the CSR helpers of k8s.io/client-go/util/certificate/csr and its FileStore
// (the kubelet's layout: <cert-dir>/<prefix>-<date>.pem with the certificate
// and key, and the symlink <prefix>-current.pem to the one in use).
//
//   - [Bootstrap] is the kubelet's TLS bootstrap: when the kubeconfig is
//     missing or its client certificate unusable, a CSR for system:node:<name>
//     (signer kubernetes.io/kube-apiserver-client-kubelet) is made with the
//     bootstrap kubeconfig, its certificate waited for and stored, and a
//     kubeconfig using it written.
//   - [Rotator] keeps one certificate of a store current: it requests a new
//     one at 70–90 % of the current one's lifetime (jittered, as the kubelet),
//     or at once when there is none or it does not fit the template, retrying
//     with back-off. Its clock is injected (k8s.io/utils/clock), so rotation is
//     tested without waiting. The client certificate uses [ClientRequest], the
//     serving certificate [ServingRequest] (signer kubernetes.io/kubelet-serving).
//
// client-go's certificate.Manager does the same job with a wall clock that
// cannot be replaced; the Rotator takes its place so that its timing is
// deterministic under test, and keeps its conventions (key type, usages, the
// CSR's wait timeout, the store).
package certs
