package kubeletapi

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// failingReactor fails every call it gets, like an unreachable API server.
func failingReactor(clienttesting.Action) (bool, runtime.Object, error) {
	return true, nil, errors.New("connection refused")
}
