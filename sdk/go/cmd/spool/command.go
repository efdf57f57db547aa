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
	"syscall"

	hyperspool "hyperspool.dev/go"
)

// commandResult is what a command printed, as bytes: a replay must give back the very bytes.
type commandResult struct {
	stdout   []byte
	exitCode int
}

// runCommand runs a step's command in the script's own environment: stdout captured as the
// step's result and printed as it comes (a long step shows its progress in spool logs and kubectl
// logs while it runs, and one cancelled or killed half-way leaves what it printed), stdin and
// stderr straight through.
func runCommand(command []string, idempotencyKey string) commandResult {
	program := command[0]
	env := os.Environ()
	if idempotencyKey != "" {
		env = setEnv(env, "SPOOL_IDEMPOTENCY_KEY", idempotencyKey)
	}
	var stdout bytes.Buffer
	cmd := &exec.Cmd{Args: command, Env: env, Stdin: os.Stdin, Stdout: io.MultiWriter(&stdout, os.Stdout), Stderr: os.Stderr}
	path, err := lookPath(program, os.Getenv("PATH"))
	if err == nil {
		cmd.Path = path
		err = cmd.Run()
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return commandResult{stdout.Bytes(), 0}
	case errors.As(err, &exit):
		return commandResult{stdout.Bytes(), exitStatus(exit.ProcessState)}
	case errors.Is(err, syscall.ENOENT):
		fmt.Fprintf(os.Stderr, "spool: cannot run '%s': command not found\n", program)
		return commandResult{nil, 127}
	}
	fmt.Fprintf(os.Stderr, "spool: cannot run '%s': %s\n", program, spawnMessage(program, err))
	return commandResult{nil, 126}
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
