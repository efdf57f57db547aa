package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeControl is the agent's control socket: it answers spec with a script and collects the log
// lines and the exit report; stopAfter, when set, sends {"stop":true} once that much output came.
type fakeControl struct {
	path     string
	logs     chan string
	exit     chan map[string]any
	sawLog   chan struct{}
	stopText string
}

func newFakeControl(t *testing.T, spec map[string]any, stopText string) *fakeControl {
	t.Helper()
	dir, err := os.MkdirTemp("", "spool-pass-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &fakeControl{path: filepath.Join(dir, "control.sock"), logs: make(chan string, 100), exit: make(chan map[string]any, 1), stopText: stopText}
	// Listen late, as the agent sidecar may start after the pass runner.
	go func() {
		time.Sleep(100 * time.Millisecond)
		listener, err := net.Listen("unix", c.path)
		if err != nil {
			return
		}
		t.Cleanup(func() { listener.Close() })
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		reader := bufio.NewReader(conn)
		output := ""
		for {
			line, err := reader.ReadBytes('\n')
			if err != nil {
				return
			}
			var message map[string]any
			json.Unmarshal(line, &message)
			switch message["verb"] {
			case "spec":
				reply, _ := json.Marshal(map[string]any{"spec": spec})
				conn.Write(append(reply, '\n'))
			case "log":
				text, _ := message["text"].(string)
				c.logs <- text
				output += text
				if c.stopText != "" && strings.Contains(output, c.stopText) {
					c.stopText = ""
					conn.Write([]byte(`{"stop":true}` + "\n"))
				}
			case "exit":
				c.exit <- message
				conn.Write([]byte(`{"ok":true}` + "\n"))
			}
		}
	}()
	return c
}

func (c *fakeControl) output() string {
	var all strings.Builder
	for {
		select {
		case text := <-c.logs:
			all.WriteString(text)
		default:
			return all.String()
		}
	}
}

func passSpecFor(script string) map[string]any {
	return map[string]any{"run": "dev:default:run-abc", "pass": 2, "filename": "flow.sh", "interpreter": "bash -eu", "script": script, "input": map[string]any{"n": 1}}
}

func TestPassRunsTheScriptAndReportsItsEnd(t *testing.T) {
	script := `echo "run=$SPOOL_RUN_ID pass=$SPOOL_PASS socket=$SPOOL_SOCKET"; cat "$SPOOL_INPUT_FILE"; echo; echo oops >&2
[ "$SPOOL_LOG_ID" = "$(stat -c %d:%i output.log)" ] && echo log-id-ok
exit 7`
	control := newFakeControl(t, passSpecFor(script), "")
	workdir := t.TempDir()
	got := runClient(t, client(t, nil, "pass", "--socket", "/tmp/the.sock", "--control", control.path, "--workdir", workdir))
	want := "run=dev:default:run-abc pass=2 socket=/tmp/the.sock\n{\"n\":1}\noops\nlog-id-ok\n"
	if got.Code != 7 || got.Stdout != want {
		t.Errorf("got %+v, want stdout %q and code 7", got, want)
	}
	exit := <-control.exit
	if exit["code"] != float64(7) || exit["signal"] != nil {
		t.Errorf("exit report %v", exit)
	}
	if logged := control.output(); logged != want {
		t.Errorf("the run's log got %q", logged)
	}
	if _, err := os.Stat(filepath.Join(workdir, "output.log")); !os.IsNotExist(err) {
		t.Errorf("output.log is removed once copied: %v", err)
	}
}

func TestPassStopsTheScriptWhenTheAgentSaysSo(t *testing.T) {
	// The script's background child must go with it: the whole group is ended.
	script := "sleep 30 & echo waiting; wait"
	control := newFakeControl(t, passSpecFor(script), "waiting")
	start := time.Now()
	got := runClient(t, client(t, nil, "pass", "--socket", "s", "--control", control.path, "--workdir", t.TempDir()))
	if got.Code != 0 {
		t.Errorf("a stopped pass exits 0: %+v", got)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the stop took %v", elapsed)
	}
	exit := <-control.exit
	if exit["code"] != nil || exit["signal"] != "SIGTERM" {
		t.Errorf("exit report %v", exit)
	}
}

func TestPassSigtermEndsTheScriptWithoutReport(t *testing.T) {
	control := newFakeControl(t, passSpecFor("echo started; sleep 30"), "")
	cmd := client(t, nil, "pass", "--socket", "s", "--control", control.path, "--workdir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for started := false; !started; {
		select {
		case text := <-control.logs:
			started = strings.Contains(text, "started")
		case <-deadline:
			t.Fatal("the script did not start")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit %d, want 143", code)
	}
	select {
	case exit := <-control.exit:
		t.Errorf("an evicted pass reported %v", exit)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestPassArgs(t *testing.T) {
	tests := []struct {
		args    []string
		problem string
	}{
		{[]string{"--socket", "s", "--control", "c"}, ""},
		{[]string{"--socket=s", "--control=c", "--workdir", "w"}, ""},
		{nil, "required option '--socket <path>' not specified"},
		{[]string{"--socket", "s"}, "required option '--control <path>' not specified"},
		{[]string{"--socket", "s", "--control", "c", "--x"}, "unknown option '--x'"},
		{[]string{"--socket", "s", "--control", "c", "extra"}, "too many arguments for 'pass'. Expected 0 arguments but got 1."},
		{[]string{"--socket", "s", "--control", "c", "--x=1"}, "unknown option '--x=1'"},
		{[]string{"--socket"}, "option '--socket <path>' argument missing"},
	}
	for _, tc := range tests {
		options, problem := parsePassArgs(tc.args)
		if problem != tc.problem {
			t.Errorf("%q: %q, want %q", tc.args, problem, tc.problem)
		}
		if problem == "" && (options.socket != "s" || options.control != "c") {
			t.Errorf("%q: %+v", tc.args, options)
		}
	}
	if options, _ := parsePassArgs([]string{"--socket", "s", "--control", "c"}); options.workdir != "/spool/work" {
		t.Errorf("default workdir %q", options.workdir)
	}
}
