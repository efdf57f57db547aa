package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// `spool launcher` starts a Node server's scripts for it (src/agent/launcher.ts). Node forks its
// whole process for each child, copying the page tables of a ~120 MiB server and leaving it pages
// to fault back in; Go starts a child with a vfork-like clone that copies nothing. Not a verb for
// people: the server sets launcherEnv when it starts it, and it serves only its parent.
//
// Requests arrive one JSON line each on stdin; answers go out one JSON line each on fd 3: the pid
// once the script started, then its exit. A closed stdin (the server is gone) ends the launcher and
// leaves the scripts running, as their processes would be left by a server that died.
const launcherEnv = "SPOOL_LAUNCHER"

type launchRequest struct {
	ID     int64    `json:"id"`
	Argv   []string `json:"argv"`
	Dir    string   `json:"dir"`
	Env    []string `json:"env"`
	Stdout string   `json:"stdout"` // a path to open for appending; empty: the launcher's own
	Stderr string   `json:"stderr"` // the same path as stdout shares its file
}

type launchAnswer struct {
	ID     int64  `json:"id"`
	Pid    int    `json:"pid,omitempty"`
	Exited bool   `json:"exited,omitempty"`
	Code   any    `json:"code,omitempty"`
	Signal any    `json:"signal,omitempty"`
	Error  string `json:"error,omitempty"`
}

func runLauncher() int {
	answers := os.NewFile(3, "answers")
	if answers == nil {
		fmt.Fprintln(os.Stderr, "spool launcher: fd 3 is not open for its answers")
		return 2
	}
	// Not the scripts' to inherit: one holding it would keep the server from seeing the launcher go.
	syscall.CloseOnExec(3)
	// A Ctrl-C at the terminal, or a SIGTERM to the server's group, is the server's to act on: it
	// ends its scripts with their grace. The launcher lives until its stdin closes. Caught, not
	// ignored, as an ignored signal would stay ignored in every script started from here.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for range signals {
		}
	}()
	var mu sync.Mutex
	encoder := json.NewEncoder(answers)
	send := func(answer launchAnswer) {
		mu.Lock()
		defer mu.Unlock()
		encoder.Encode(answer) // a server gone is the only failure, and stdin's end follows it
	}
	reader := bufio.NewReaderSize(os.Stdin, 64*1024)
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) > 0 {
			launch(line, send)
		}
		if err != nil {
			return 0
		}
	}
}

func launch(line []byte, send func(launchAnswer)) {
	var request launchRequest
	if err := json.Unmarshal(line, &request); err != nil || len(request.Argv) == 0 {
		send(launchAnswer{ID: request.ID, Error: fmt.Sprintf("a launch request that is not one: %q", line)})
		return
	}
	stdout, stderr, err := outputsOf(request)
	if err != nil {
		send(launchAnswer{ID: request.ID, Error: err.Error()})
		return
	}
	script := startProcess(request.Argv, request.Dir, request.Env, stdout, stderr)
	// The child has its own copies of the files now.
	for _, file := range []*os.File{stdout, stderr} {
		if file != os.Stdout && file != os.Stderr {
			file.Close()
		}
	}
	pid := 0
	if script.cmd != nil && script.cmd.Process != nil {
		pid = script.cmd.Process.Pid
	}
	send(launchAnswer{ID: request.ID, Pid: pid})
	go func() {
		exit := <-script.exited
		send(launchAnswer{ID: request.ID, Exited: true, Code: exit.codeValue(), Signal: exit.signalValue()})
	}()
}

// outputsOf opens the request's stdout and stderr, one file when both name the same path.
func outputsOf(request launchRequest) (*os.File, *os.File, error) {
	open := func(path string, own *os.File) (*os.File, error) {
		if path == "" {
			return own, nil
		}
		return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_CLOEXEC, 0)
	}
	stdout, err := open(request.Stdout, os.Stdout)
	if err != nil {
		return nil, nil, err
	}
	if request.Stderr == request.Stdout && request.Stdout != "" {
		return stdout, stdout, nil
	}
	stderr, err := open(request.Stderr, os.Stderr)
	if err != nil {
		if stdout != os.Stdout {
			stdout.Close()
		}
		return nil, nil, err
	}
	return stdout, stderr, nil
}
