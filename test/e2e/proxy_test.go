package e2e

import (
	"io"
	"net"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// cutProxy forwards TCP from a loopback port to target until it is cut:
// then every connection is closed and new ones are refused, as when the
// API server is unreachable, until restore.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		if !down {
			p.conns[c] = true
		}
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *cutProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[up] = true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// cut closes every connection and refuses new ones.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// proxiedKubeconfig writes a copy of kubeconfig whose server is the proxy
// (same 127.0.0.1 address, so the API server's certificate still fits).
func proxiedKubeconfig(t *testing.T, kubeconfig string) (path string, p *cutProxy) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var target string
	for _, cl := range cfg.Clusters {
		u := cl.Server
		host := u[len("https://"):]
		target = host
		p = startCutProxy(t, target)
		cl.Server = "https://" + p.addr()
		break
	}
	if p == nil {
		t.Fatalf("%s names no cluster", kubeconfig)
	}
	path = t.TempDir() + "/proxied.kubeconfig"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, p
}
