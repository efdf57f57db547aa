package main

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"hyperspool.dev/go/internal/command"
)

// killGrace is how long a script has after SIGTERM before its group is killed outright.
const killGrace = 2 * time.Second

type scriptExit struct {
	code   *int    // nil when a signal ended the script
	signal *string // the signal's name, as Node names it
}

// A scriptProcess is the script as a session (and so a process group) of its own, so ending it
// ends every command it started (a step's command, a pipeline, a background job) and nothing else.
type scriptProcess struct {
	cmd    *exec.Cmd
	exited chan scriptExit
	once   sync.Once
	result scriptExit
	ended  chan struct{}
}

func startScript(argv []string, dir string, env []string, output *os.File) *scriptProcess {
	return startProcess(argv, dir, env, output, output)
}

func startProcess(argv []string, dir string, env []string, stdout, stderr *os.File) *scriptProcess {
	s := &scriptProcess{exited: make(chan scriptExit, 1), ended: make(chan struct{})}
	path, err := command.LookPath(argv[0], pathOf(env))
	if err == nil {
		s.cmd = &exec.Cmd{
			Path:        path,
			Args:        argv,
			Dir:         dir,
			Env:         env,
			Stdout:      stdout,
			Stderr:      stderr,
			SysProcAttr: &syscall.SysProcAttr{Setsid: true},
		}
		err = s.cmd.Start()
	}
	if err != nil {
		code := 127
		s.finish(scriptExit{code: &code})
		return s
	}
	go func() {
		s.cmd.Wait()
		s.signalGroup(syscall.SIGKILL) // stragglers the script left behind
		s.finish(exitOf(s.cmd.ProcessState))
	}()
	return s
}

// codeValue and signalValue are the fields of the exit report: a number or a name, else null.
func (e scriptExit) codeValue() any {
	if e.code == nil {
		return nil
	}
	return *e.code
}

func (e scriptExit) signalValue() any {
	if e.signal == nil {
		return nil
	}
	return *e.signal
}

func (s *scriptProcess) finish(exit scriptExit) {
	s.result = exit
	close(s.ended)
	s.exited <- exit
}

func exitOf(state *os.ProcessState) scriptExit {
	if status, ok := state.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		name := signalName(status.Signal())
		return scriptExit{signal: &name}
	}
	code := state.ExitCode()
	return scriptExit{code: &code}
}

// end sends SIGTERM to the group, and SIGKILL if it is still there after the grace period.
func (s *scriptProcess) end() {
	s.signalGroup(syscall.SIGTERM)
	go func() {
		select {
		case <-s.ended:
		case <-time.After(killGrace):
			s.signalGroup(syscall.SIGKILL)
		}
	}()
}

func (s *scriptProcess) signalGroup(signal syscall.Signal) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, signal) // an error means the group is gone already
}

func pathOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if len(env[i]) >= 5 && env[i][:5] == "PATH=" {
			return env[i][5:]
		}
	}
	return ""
}
