//go:build !linux

package command

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
)

// Run starts path (found already) with argv and env, stdin this process's, and waits for it as a
// step does: stdout and stderr go on to this process's own as they come, stdout kept whole, the
// end of stderr kept as the tail (run_linux.go says the same with system calls of its own).
func Run(path string, argv, env []string) (Result, error) {
	var stdout bytes.Buffer
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: os.Stdin, Stdout: io.MultiWriter(&stdout, os.Stdout), Stderr: os.Stderr}
	stderr := TeeStderr(cmd)
	err := cmd.Run()
	stderr.Finish()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return Result{Stdout: stdout.Bytes()}, nil
	case errors.As(err, &exit):
		return Result{Stdout: stdout.Bytes(), ExitCode: ExitStatus(exit.ProcessState), StderrTail: stderr.Text()}, nil
	}
	return Result{}, err
}
