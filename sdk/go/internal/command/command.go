// Package command runs a program as the native client's verbs do, for both of its binaries (the
// in-script client, cmd/spool, and an activity attempt's reporter, cmd/spool-activity-attempt):
// the program found as execvp finds it, the exit code a shell would report, a failed command's
// stderr tail kept for people, and a failure to start worded as Node words it.
package command

import (
	"errors"
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

// Result is what a command printed, as bytes: a replay must give back the very bytes.
// StderrTail is the end of what it wrote to stderr, kept beside a failed step's (or activity
// attempt's) result so the run page, spool status and a Run's message can say why it failed; a
// replay never returns it.
type Result struct {
	Stdout     []byte
	ExitCode   int
	StderrTail string
}

// stderrTailBytes is how much of a failed command's stderr is kept (STDERR_TAIL_BYTES in src/engine/protocol.ts).
const stderrTailBytes = 1024

// stderrGrace is how long a command's stderr is read after the command ended: a process it left
// in the background may hold stderr open for good, and the step must not wait for it.
const stderrGrace = 250 * time.Millisecond

// A Tail keeps the last bytes written to it (a stderr pipe's copier writes while the step reads
// it, once the grace is over).
type Tail struct {
	mu     sync.Mutex
	bytes  []byte
	cut    bool
	copied chan struct{}
	pipe   *os.File
}

// TeeStderr gives the command a pipe for stderr whose bytes go on to this process's stderr as
// they come, the last of them kept. Without a pipe, stderr goes straight through and no tail is kept.
func TeeStderr(cmd *exec.Cmd) *Tail {
	tail := &Tail{copied: make(chan struct{})}
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

// Finish closes this process's end of the pipe and waits for what the command wrote, at most stderrGrace.
func (t *Tail) Finish() {
	if t.pipe != nil {
		t.pipe.Close()
	}
	select {
	case <-t.copied:
	case <-time.After(stderrGrace):
	}
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bytes = append(t.bytes, p...)
	if len(t.bytes) > stderrTailBytes {
		t.bytes = append([]byte(nil), t.bytes[len(t.bytes)-stderrTailBytes:]...)
		t.cut = true
	}
	return len(p), nil
}

// Text is the tail as text: NUL and bytes that are not UTF-8 become U+FFFD (a jsonb string holds
// neither), a line cut by the start dropped.
func (t *Tail) Text() string {
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

// TailOf cuts a message of ours to what a tail keeps: a program's name may be longer than that.
func TailOf(message string) string {
	var tail Tail
	_, _ = tail.Write([]byte(message))
	return tail.Text()
}

// ExitStatus is the code a shell would report: the exit code, or 128 plus the signal's number.
func ExitStatus(state *os.ProcessState) int {
	if status, ok := state.Sys().(syscall.WaitStatus); ok {
		return exitCodeOf(status)
	}
	if code := state.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

func exitCodeOf(status syscall.WaitStatus) int {
	switch {
	case status.Signaled():
		return 128 + int(status.Signal())
	case status.Exited():
		return status.ExitStatus()
	}
	return 1
}

// SpawnMessage words a failure to start a program as Node does ("spawn ./x EACCES").
func SpawnMessage(program string, err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := hyperspool.ErrnoName(errno); name != "" {
			return "spawn " + program + " " + name
		}
	}
	return err.Error()
}

// ExecMessage words a failure to find or start a program in a line of ours.
func ExecMessage(err error) string {
	if errors.Is(err, syscall.ENOENT) {
		return "not found"
	}
	return err.Error()
}

// LookPath finds program as execvp(3) (and so Node's spawn) does: a name with a slash is used as
// it is; otherwise the first executable file of that name in PATH, where an empty entry is the
// current directory. A match that cannot be executed makes the error EACCES rather than ENOENT.
func LookPath(program, pathList string) (string, error) {
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
