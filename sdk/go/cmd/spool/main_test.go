package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hyperspool.dev/go/internal/selfexec"
)

// TestMain lets the tests run this very test binary as the `spool` command: with
// SPOOL_TEST_AS_CLIENT set it is the client, not the tests.
func TestMain(m *testing.M) {
	if os.Getenv("SPOOL_TEST_AS_CLIENT") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// client is the command line of the client under test, with a clean SPOOL_* environment.
func client(t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	// One connect attempt, unless the test asks for more: a test of a missing agent fails at once.
	withDefaults := map[string]string{"SPOOL_CONNECT_ATTEMPTS": "1"}
	for k, v := range env {
		withDefaults[k] = v
	}
	return selfexec.Command(t, "SPOOL_TEST_AS_CLIENT", withDefaults, args...)
}

var runClient = selfexec.Run

// fakeAgent answers the lines of one connection with replies, in order; a reply of "" closes
// the connection instead.
type fakeAgent struct {
	path     string
	mu       sync.Mutex
	received []string
}

func newFakeAgent(t *testing.T, replies ...string) *fakeAgent {
	t.Helper()
	dir, err := os.MkdirTemp("", "spool-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	agent := &fakeAgent{path: filepath.Join(dir, "agent.sock")}
	listener, err := net.Listen("unix", agent.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	go func() {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		reader := bufio.NewReader(conn)
		for _, reply := range replies {
			line, err := reader.ReadString('\n')
			if err != nil {
				return
			}
			agent.mu.Lock()
			agent.received = append(agent.received, strings.TrimSuffix(line, "\n"))
			agent.mu.Unlock()
			if reply == "" {
				return
			}
			conn.Write([]byte(reply + "\n"))
		}
		io := make([]byte, 1)
		conn.Read(io) // hold the connection until the client ends
	}()
	return agent
}

func (a *fakeAgent) lines() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.received...)
}

func TestStepExecutesAndReportsDone(t *testing.T) {
	agent := newFakeAgent(t,
		`{"status":"execute","position":2,"idempotencyKey":"spool-k1"}`,
		`{"status":"ok","exitCode":3}`)
	got := runClient(t, client(t, map[string]string{"SPOOL_SOCKET": agent.path},
		"step", "book", "--", "sh", "-c", `printf '%s\n' "$SPOOL_IDEMPOTENCY_KEY"; echo warn >&2; exit 3`))
	if got.Code != 3 || got.Stdout != "spool-k1\n" || got.Stderr != "warn\n" {
		t.Errorf("got %+v", got)
	}
	// A failed command's stderr reaches the log as it is written, and its tail goes with the result.
	want := []string{`{"verb":"step","name":"book"}`, `{"verb":"done","position":2,"stdout":"spool-k1\n","exitCode":3,"stderrTail":"warn"}`}
	if lines := agent.lines(); strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("agent got %q, want %q", lines, want)
	}
}

func TestStepCommandFailures(t *testing.T) {
	tests := []struct {
		command []string
		code    int
		stderr  string
		stdout  string
	}{
		{[]string{"no-such-command-here"}, 127, "spool: cannot run 'no-such-command-here': command not found\n", ""},
		{[]string{"sh", "-c", "echo partial; kill -9 $$"}, 137, "", "partial\n"},
		{[]string{filepath.Join("testdata", "child.txt")}, 126, "spool: cannot run 'testdata/child.txt': spawn testdata/child.txt EACCES\n", ""},
	}
	for _, tc := range tests {
		agent := newFakeAgent(t, `{"status":"execute","position":0}`, `{"status":"ok","exitCode":0}`)
		got := runClient(t, client(t, map[string]string{"SPOOL_SOCKET": agent.path}, append([]string{"step", "s", "--"}, tc.command...)...))
		if got.Stderr != tc.stderr {
			t.Errorf("%q: stderr %q, want %q", tc.command, got.Stderr, tc.stderr)
		}
		want := fmt.Sprintf(`{"verb":"done","position":0,"stdout":%q,"exitCode":%d}`, tc.stdout, tc.code)
		if tail := strings.TrimSpace(tc.stderr); tail != "" {
			want = fmt.Sprintf(`{"verb":"done","position":0,"stdout":%q,"exitCode":%d,"stderrTail":%q}`, tc.stdout, tc.code, tail)
		}
		if lines := agent.lines(); len(lines) != 2 || lines[1] != want {
			t.Errorf("%q: agent got %q, want done %s", tc.command, lines, want)
		}
	}
}

func TestReplayedAnswerIsNotPrintedIntoTheLog(t *testing.T) {
	dir := t.TempDir()
	for _, intoLog := range []bool{true, false} {
		agent := newFakeAgent(t, `{"status":"ok","stdout":"FL-881\n","stderr":"note","exitCode":0,"replayed":true}`)
		log, err := os.Create(filepath.Join(dir, fmt.Sprintf("log-%v", intoLog)))
		if err != nil {
			t.Fatal(err)
		}
		other, _ := os.Create(filepath.Join(dir, fmt.Sprintf("other-%v", intoLog)))
		logID, _ := fileIdentity(int(other.Fd()))
		if intoLog {
			logID, _ = fileIdentity(int(log.Fd()))
		}
		cmd := client(t, map[string]string{"SPOOL_SOCKET": agent.path, "SPOOL_LOG_ID": logID}, "step", "s", "--", "true")
		cmd.Stdout = log
		got := runClient(t, cmd)
		log.Close()
		other.Close()
		printed, _ := os.ReadFile(log.Name())
		if intoLog && string(printed) != "" {
			t.Errorf("a replayed answer was printed into the run's log again: %q", printed)
		}
		if !intoLog && string(printed) != "FL-881\n" {
			t.Errorf("stdout that is not the log gets the replayed value: %q", printed)
		}
		if got.Stderr != "note\n" || got.Code != 0 {
			t.Errorf("stderr is not the log, so the note is printed: %+v", got)
		}
	}
}

func TestAnswers(t *testing.T) {
	tests := []struct {
		reply  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{`{"status":"ok","stdout":"v1"}`, []string{"state", "get", "k"}, 0, "v1", ""},
		{`{"status":"ok","exitCode":3,"stderr":"key 'k' is taken"}`, []string{"state", "add", "k"}, 3, "", "key 'k' is taken\n"},
		{`{"status":"ok","exitCode":124,"stderr":"timed out"}`, []string{"wait", "signal", "go", "--timeout", "1s"}, 124, "", "timed out\n"},
		{`{"status":"error","kind":"determinism","message":"position 0 recorded step 'a'","exitCode":1}`, []string{"sleep", "1s"}, 1, "", "position 0 recorded step 'a'\n"},
		{`{"status":"execute","position":0}`, []string{"lock", "g"}, 1, "", "spool: unexpected answer from the agent: execute\n"},
		{"", []string{"annotate", "x"}, 69, "", "spool: the agent went away during the call\n"},
		{`not json`, []string{"annotate", "x"}, 1, "", ""},
	}
	for _, tc := range tests {
		agent := newFakeAgent(t, tc.reply)
		got := runClient(t, client(t, map[string]string{"SPOOL_SOCKET": agent.path}, tc.args...))
		if got.Code != tc.code || got.Stdout != tc.stdout || (tc.stderr != "" && got.Stderr != tc.stderr) {
			t.Errorf("%s -> %+v, want code %d stdout %q stderr %q", tc.reply, got, tc.code, tc.stdout, tc.stderr)
		}
	}
}

func TestSuspendedBlocksUntilKilled(t *testing.T) {
	agent := newFakeAgent(t, `{"status":"suspended","message":"script suspended awaiting timer 2030-01-01T00:00:00.000Z"}`)
	cmd := client(t, map[string]string{"SPOOL_SOCKET": agent.path}, "sleep", "1h")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the client returned from a suspended call: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	cmd.Process.Kill()
	<-exited
	if lines := agent.lines(); len(lines) != 1 || lines[0] != `{"verb":"sleep","ms":3600000}` {
		t.Errorf("agent got %q", lines)
	}
}

func TestNoAgent(t *testing.T) {
	got := runClient(t, client(t, nil, "step", "a", "--", "true"))
	want := "spool step: no agent to talk to (SPOOL_SOCKET is not set); in-script verbs run inside a script started by 'spool run', 'spool submit' or a cluster run\n"
	if got.Code != 69 || got.Stderr != want {
		t.Errorf("got %+v", got)
	}
	missing := filepath.Join(t.TempDir(), "gone.sock")
	got = runClient(t, client(t, map[string]string{"SPOOL_SOCKET": missing}, "state", "get", "k"))
	if want := "spool: cannot reach the agent at " + missing + ": connect ENOENT " + missing + "\n"; got.Code != 69 || got.Stderr != want {
		t.Errorf("got %+v, want %q", got, want)
	}
	got = runClient(t, client(t, nil, "step", "a", "--lable", "x", "--", "true"))
	if got.Code != 2 || got.Stderr != "spool step: Unknown option '--lable' (usage: spool step NAME [--label TEXT] -- COMMAND [ARG...])\n" {
		t.Errorf("a usage error comes before the missing agent: %+v", got)
	}
}

func TestControlCommandsAreHandedOn(t *testing.T) {
	got := runClient(t, client(t, nil, "submit", "flow.sh"))
	if got.Code != 2 || !strings.HasPrefix(got.Stderr, "spool: 'submit' is a control command, which this native client does not serve") {
		t.Errorf("got %+v", got)
	}
	got = runClient(t, client(t, nil, "a\nb\x01", "flow.sh"))
	if got.Code != 2 || !strings.HasPrefix(got.Stderr, `spool: 'a\nb\u0001' is a control command,`) || strings.Count(got.Stderr, "\n") != 1 {
		t.Errorf("a verb with a line break is quoted in one line: %+v", got)
	}
	got = runClient(t, client(t, nil, "state", "list", "k", "a\nb"))
	if got.Code != 2 || !strings.HasPrefix(got.Stderr, `spool state list: unexpected argument 'a\nb'`) || strings.Count(got.Stderr, "\n") != 1 {
		t.Errorf("an argument with a line break is quoted in one line: %+v", got)
	}
	got = runClient(t, client(t, nil, "event", "emit", "t"))
	if got.Code != 2 || !strings.Contains(got.Stderr, "'event' outside a script") {
		t.Errorf("event emit without SPOOL_SOCKET is a control command: %+v", got)
	}
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo")
	}
	got = runClient(t, client(t, map[string]string{"SPOOL_CONTROL_CLI": echo}, "runs", "--json"))
	if got.Code != 0 || got.Stdout != "runs --json\n" {
		t.Errorf("handed to SPOOL_CONTROL_CLI: %+v", got)
	}
}

// A step whose output nobody reads any more (`spool step x -- yes | head -1`) ends as it would
// in a shell: the client dies of SIGPIPE and the command with it, rather than reading on for ever.
func TestStepWhoseStdoutReaderIsGoneEndsBySigpipe(t *testing.T) {
	agent := newFakeAgent(t, `{"status":"execute","position":0}`, `{"status":"ok","exitCode":0}`)
	read, write, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read.Close()
	cmd := client(t, map[string]string{"SPOOL_SOCKET": agent.path}, "step", "gen", "--", "yes")
	cmd.Stdout = write
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	write.Close()
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the client read on after its stdout's reader was gone")
	}
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !status.Signaled() || status.Signal() != syscall.SIGPIPE {
		t.Errorf("client ended %v, want killed by SIGPIPE", cmd.ProcessState)
	}
}
