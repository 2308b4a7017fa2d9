// Package serve serves CRI gRPC services on a socket: the listener
// (Listen: unix sockets that appear atomically with mode 0660, loopback TCP)
// and a gRPC server whose calls end promptly when it shuts down (Server).
// The simulated runtime (cri/sim) and `actorlet cri-proxy` use it.
package serve
