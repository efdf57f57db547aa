package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	hyperspool "hyperspool.dev/go"
)

// commandResult is what a command printed, as bytes: a replay must give back the very bytes.
// stderrTail is the end of what it wrote to stderr, kept beside a failed step's (or activity attempt's) result so the run
// page, spool status and a Run's message can say why it failed; a replay never returns it.
type commandResult struct {
	stdout     []byte
	exitCode   int
	stderrTail string
}

// stderrTailBytes is how much of a failed command's stderr is kept (STDERR_TAIL_BYTES in src/engine/protocol.ts).
const stderrTailBytes = 1024

// stderrGrace is how long a command's stderr is read after the command ended: a process it left
// in the background may hold stderr open for good, and the step must not wait for it.
const stderrGrace = 250 * time.Millisecond

// A tailBuffer keeps the last bytes written to it (a stderr pipe's copier writes while the step
// reads it, once the grace is over).
type tailBuffer struct {
	mu     sync.Mutex
	bytes  []byte
	cut    bool
	copied chan struct{}
	pipe   *os.File
}

// teeStderr gives the command a pipe for stderr whose bytes go on to this process's stderr as
// they come, the last of them kept. Without a pipe, stderr goes straight through and no tail is kept.
func teeStderr(cmd *exec.Cmd) *tailBuffer {
	tail := &tailBuffer{copied: make(chan struct{})}
	read, write, err := os.Pipe()
	if err != nil {
		close(tail.copied)
		return tail
	}
	cmd.Stderr, tail.pipe = write, write
	go func() {
		_, _ = io.Copy(io.MultiWriter(tail, os.Stderr), read)
		read.Close()
		close(tail.copied)
	}()
	return tail
}

// finish closes this process's end of the pipe and waits for what the command wrote, at most stderrGrace.
func (t *tailBuffer) finish() {
	if t.pipe != nil {
		t.pipe.Close()
	}
	select {
	case <-t.copied:
	case <-time.After(stderrGrace):
	}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bytes = append(t.bytes, p...)
	if len(t.bytes) > stderrTailBytes {
		t.bytes = append([]byte(nil), t.bytes[len(t.bytes)-stderrTailBytes:]...)
		t.cut = true
	}
	return len(p), nil
}

// text is the tail as text: NUL and bytes that are not UTF-8 become U+FFFD (a jsonb string holds
// neither), a line cut by the start dropped.
func (t *tailBuffer) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := strings.ReplaceAll(strings.ToValidUTF8(string(t.bytes), "\uFFFD"), "\x00", "\uFFFD")
	if t.cut {
		if cut := strings.IndexByte(text, '\n'); cut >= 0 {
			text = text[cut+1:]
		}
	}
	return strings.TrimSpace(text)
}

// runCommand runs a step's command in the script's own environment: stdout captured as the
// step's result and printed as it comes (a long step shows its progress in spool logs and kubectl
// logs while it runs, and one cancelled or killed half-way leaves what it printed), stdin straight
// through, stderr through with its tail kept for a failed step. With tracing on, the answer's
// traceparent names the step's span: as TRACEPARENT, a command that traces joins the run's trace.
func runCommand(command []string, idempotencyKey, traceparent string) commandResult {
	program := command[0]
	env := os.Environ()
	if idempotencyKey != "" {
		env = setEnv(env, "SPOOL_IDEMPOTENCY_KEY", idempotencyKey)
	}
	if traceparent != "" {
		env = setEnv(env, "TRACEPARENT", traceparent)
	}
	var stdout bytes.Buffer
	cmd := &exec.Cmd{Args: command, Env: env, Stdin: os.Stdin, Stdout: io.MultiWriter(&stdout, os.Stdout), Stderr: os.Stderr}
	stderr := teeStderr(cmd)
	path, err := lookPath(program, os.Getenv("PATH"))
	if err == nil {
		cmd.Path = path
		err = cmd.Run()
	}
	stderr.finish()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return commandResult{stdout.Bytes(), 0, ""}
	case errors.As(err, &exit):
		return commandResult{stdout.Bytes(), exitStatus(exit.ProcessState), stderr.text()}
	case errors.Is(err, syscall.ENOENT):
		message := fmt.Sprintf("spool: cannot run '%s': command not found", program)
		fmt.Fprintln(os.Stderr, message)
		return commandResult{nil, 127, tailOf(message)}
	}
	message := fmt.Sprintf("spool: cannot run '%s': %s", program, spawnMessage(program, err))
	fmt.Fprintln(os.Stderr, message)
	return commandResult{nil, 126, tailOf(message)}
}

// tailOf cuts a message of ours to what a tail keeps: a program's name may be longer than that.
func tailOf(message string) string {
	var tail tailBuffer
	_, _ = tail.Write([]byte(message))
	return tail.text()
}

// exitStatus is the code a shell would report: the exit code, or 128 plus the signal's number.
func exitStatus(state *os.ProcessState) int {
	if status, ok := state.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	if code := state.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

// spawnMessage words a failure to start a program as Node does ("spawn ./x EACCES").
func spawnMessage(program string, err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := hyperspool.ErrnoName(errno); name != "" {
			return "spawn " + program + " " + name
		}
	}
	return err.Error()
}

// lookPath finds program as execvp(3) (and so Node's spawn) does: a name with a slash is used as
// it is; otherwise the first executable file of that name in PATH, where an empty entry is the
// current directory. A match that cannot be executed makes the error EACCES rather than ENOENT.
func lookPath(program, pathList string) (string, error) {
	if program == "" {
		return "", syscall.ENOENT
	}
	if strings.Contains(program, "/") {
		return program, nil
	}
	denied := false
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, program)
		info, err := os.Stat(candidate)
		if err != nil {
			continue
		}
		if info.IsDir() || syscall.Access(candidate, 1 /* X_OK */) != nil {
			denied = true
			continue
		}
		if !strings.Contains(candidate, "/") {
			candidate = "./" + candidate
		}
		return candidate, nil
	}
	if denied {
		return "", syscall.EACCES
	}
	return "", syscall.ENOENT
}

// setEnv returns env with name set to value, replacing any earlier setting.
func setEnv(env []string, name, value string) []string {
	prefix := name + "="
	out := env[:0:0]
	for _, entry := range env {
		if !strings.HasPrefix(entry, prefix) {
			out = append(out, entry)
		}
	}
	return append(out, prefix+value)
}
