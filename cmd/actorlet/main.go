// Command actorlet is a Kubernetes node agent built as an event-sourced actor system.
package main

import (
	"os"

	"github.com/actorlet/actorlet/cmd/actorlet/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
