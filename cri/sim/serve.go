package sim

import (
	"context"
	"fmt"
)

// Serve serves rt's RuntimeService and ImageService over gRPC on listen
// until ctx is done, then stops gracefully (event streams and waiting
// calls are ended first) and returns nil; it returns an error if it
// cannot listen or serving fails. rt stays usable afterwards.
//
// listen is "unix:///absolute/path.sock": the parent directory is created
// (0750), a stale socket file is replaced (a socket with a live server
// behind it is ErrSocketInUse; a non-socket file is an error), the socket
// appears atomically with mode 0660 and is removed at the end.
// "tcp://127.0.0.1:port" (any loopback address or localhost) is accepted
// too; any other address is ErrUnsupportedEndpoint. (See cri/serve.)
func Serve(ctx context.Context, listen string, rt *Runtime) error {
	if err := newServer(rt).Run(ctx, listen); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	return nil
}
