package kubeletapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/websocket"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericrest "k8s.io/apiserver/pkg/registry/generic/rest"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// The API server serves a pod's log over WebSockets (kubectl's and the
// e2e suite's "logs over websockets") as its responsewriters.StreamObject
// does: the kubelet's /containerLogs read through a LocationStreamer (a
// plain GET), copied into a wsstream.Reader. The client must get the log
// in binary frames after the empty first one, then EOF.
func TestContainerLogsThroughTheAPIServersWebSocketStream(t *testing.T) {
	e, _ := startWithLogs(t)
	transport := &http.Transport{TLSClientConfig: e.tlsConfig(e.client)}
	t.Cleanup(transport.CloseIdleConnections)
	apiserver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		loc := &url.URL{Scheme: "https", Host: e.s.Addr(), Path: "/containerLogs/ns/pod/ctr", RawQuery: req.URL.RawQuery}
		streamer := &genericrest.LocationStreamer{Location: loc, Transport: transport, ContentType: "text/plain",
			ResponseChecker: genericrest.NewGenericHttpResponseChecker(schemaGR(), "pod"), RedirectChecker: genericrest.PreventRedirects}
		out, _, _, err := streamer.InputStream(req.Context(), "v1", req.Header.Get("Accept"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer out.Close()
		if !wsstream.IsWebSocketRequest(req) {
			_, _ = io.Copy(w, out)
			return
		}
		if err := wsstream.NewReader(out, true, wsstream.NewDefaultReaderProtocols()).Copy(w, req); err != nil {
			t.Errorf("streaming via websocket: %v", err)
		}
	}))
	t.Cleanup(apiserver.Close)

	cfg, err := websocket.NewConfig(strings.Replace(apiserver.URL, "http", "ws", 1)+"/log?container=ctr", apiserver.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Protocol = []string{"binary.k8s.io"}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var got bytes.Buffer
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("receive: %v", err)
		}
		got.Write(msg)
	}
	if want := "one\ntwo\nthree\nfour\n\n"; got.String() != want {
		t.Errorf("log over websocket = %q, want %q", got.String(), want)
	}
}

func schemaGR() schema.GroupResource { return schema.GroupResource{Resource: "pods/log"} }
