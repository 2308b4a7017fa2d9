// Command workload is the end-to-end tests' container: it prints, writes
// files, serves HTTP, sleeps and exits as its flags say, so that tests see
// real logs, exit codes, signals and limits on a real runtime.
//
//	workload [-msg S] [-stderr S] [-write PATH=CONTENT]... [-cat PATH] [-print-uid]
//	         [-http ADDR] [-print-every D] [-burn] [-sleep D] [-exit N]
//	         [-ignore-sigterm] [-on-term-exit N]
//
// It runs until -sleep passes and exits with -exit; with neither, forever;
// with -exit alone, it exits at once. On
// SIGTERM it prints "got SIGTERM" and exits with -on-term-exit, unless
// -ignore-sigterm, which leaves it to SIGKILL.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(s string) error { *f = append(*f, s); return nil }

func main() {
	msg := flag.String("msg", "workload started", "line printed to stdout at start")
	errMsg := flag.String("stderr", "", "line printed to stderr at start")
	var writes files
	flag.Var(&writes, "write", "PATH=CONTENT: write a file at start (repeatable)")
	cat := flag.String("cat", "", "print this file's contents at start")
	printUID := flag.Bool("print-uid", false, `print "uid=<uid> gid=<gid>" at start`)
	addr := flag.String("http", "", "serve HTTP here (/ answers \"ok <hostname>\", /healthz 200)")
	every := flag.Duration("print-every", 0, "print a numbered line this often")
	sleep := flag.Duration("sleep", 0, "exit after this long (0: at once if -exit is given, else never)")
	code := flag.Int("exit", 0, "exit code after -sleep")
	ignoreTerm := flag.Bool("ignore-sigterm", false, "keep running on SIGTERM")
	termCode := flag.Int("on-term-exit", 0, "exit code on SIGTERM")
	burn := flag.Bool("burn", false, "keep one CPU busy")
	flag.Parse()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	host, _ := os.Hostname()
	fmt.Println(*msg)
	if *errMsg != "" {
		fmt.Fprintln(os.Stderr, *errMsg)
	}
	if *printUID {
		fmt.Printf("uid=%d gid=%d\n", os.Getuid(), os.Getgid())
	}
	for _, w := range writes {
		path, content, _ := strings.Cut(w, "=")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			os.Exit(2)
		}
	}
	if *cat != "" {
		b, err := os.ReadFile(*cat)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cat:", err)
			os.Exit(2)
		}
		fmt.Print(string(b))
	}
	if *addr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "ok %s\n", host) })
		go func() {
			fmt.Fprintln(os.Stderr, "http:", http.ListenAndServe(*addr, mux))
			os.Exit(3)
		}()
	}
	if *burn {
		go func() {
			for n := 0; ; n++ {
				_ = n * n
			}
		}()
	}
	var tick <-chan time.Time
	if *every > 0 {
		tick = time.NewTicker(*every).C
	}
	exitSet := false
	flag.Visit(func(f *flag.Flag) { exitSet = exitSet || f.Name == "exit" })
	var done <-chan time.Time
	if *sleep > 0 || exitSet {
		done = time.After(*sleep)
	}
	for n := 1; ; {
		select {
		case s := <-sig:
			if *ignoreTerm && s == syscall.SIGTERM {
				fmt.Println("ignoring SIGTERM")
				continue
			}
			fmt.Println("got", name(s))
			os.Exit(*termCode)
		case <-tick:
			fmt.Println("line", n)
			n++
		case <-done:
			os.Exit(*code)
		}
	}
}

// name is a signal's name as kill(1) spells it.
func name(s os.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}
