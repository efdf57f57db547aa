package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	hyperspool "hyperspool.dev/go"
)

// How long `spool pass` waits for the agent's control socket, and how often it tries: the
// kubelet starts both containers with no order between them and a busy node may be slow, while
// trying a local socket often is cheap (a refused connect, some microseconds) and starts the
// script that much sooner: at 25 ms the script waited 12 ms on average after the agent listened.
const (
	agentWait     = 60 * time.Second
	agentWaitStep = 5 * time.Millisecond
)

// passSpec is what the agent says the pass runs.
type passSpec struct {
	Run         string          `json:"run"`
	Pass        json.Number     `json:"pass"`
	Filename    string          `json:"filename"`
	Interpreter string          `json:"interpreter"`
	Script      string          `json:"script"`
	Input       json.RawMessage `json:"input"`
}

// controlLine is any message from the agent on the control socket.
type controlLine struct {
	Stop  bool      `json:"stop"`
	Error *string   `json:"error"`
	Spec  *passSpec `json:"spec"`
}

// controlChannel is the runner's side of the agent's control socket: questions answered in
// order, and a stop the agent may send at any time.
type controlChannel struct {
	conn    net.Conn
	writeMu sync.Mutex
	mu      sync.Mutex
	waiting []chan *controlLine
	closed  bool
	onStop  func()
}

var errControlClosed = errors.New("the agent's control socket closed")

func (c *controlChannel) read() {
	reader := bufio.NewReaderSize(c.conn, 64*1024)
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var message controlLine
			if json.Unmarshal(line, &message) == nil {
				if message.Stop {
					c.onStop()
				} else if next := c.next(); next != nil {
					next <- &message
				}
			}
		}
		if err != nil {
			c.mu.Lock()
			c.closed = true
			for _, waiter := range c.waiting {
				close(waiter)
			}
			c.waiting = nil
			c.mu.Unlock()
			return
		}
	}
}

func (c *controlChannel) next() chan *controlLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiting) == 0 {
		return nil
	}
	next := c.waiting[0]
	c.waiting = c.waiting[1:]
	return next
}

func (c *controlChannel) send(message *hyperspool.Request) {
	line, _ := message.MarshalJSON()
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.conn.Write(append(line, '\n')) // a lost agent shows when its answer does not come
}

func (c *controlChannel) ask(message *hyperspool.Request) (*controlLine, error) {
	answer := make(chan *controlLine, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errControlClosed
	}
	c.waiting = append(c.waiting, answer)
	c.mu.Unlock()
	c.send(message)
	reply, ok := <-answer
	if !ok {
		return nil, errControlClosed
	}
	return reply, nil
}

// runPodPass asks the agent for the pass's script, runs it as a process group of its own, ends
// it when the agent says the run suspended, and reports how it ended. It returns 0 when the
// agent stopped the script (the pass ended as planned), else the script's code.
func runPodPass(options *passOptions) (int, error) {
	conn, err := connectWithin(options.control, agentWait)
	if err != nil {
		return 0, err
	}
	var mu sync.Mutex
	stopRequested := false
	var script *scriptProcess
	control := &controlChannel{conn: conn}
	control.onStop = func() {
		mu.Lock()
		defer mu.Unlock()
		stopRequested = true
		if script != nil {
			script.end()
		}
	}
	go control.read()
	defer conn.Close()

	reply, err := control.ask(hyperspool.NewRequest("spec"))
	if err != nil {
		return 0, err
	}
	if reply.Error != nil {
		return 0, errors.New(*reply.Error)
	}
	if reply.Spec == nil {
		return 0, errors.New("the agent sent no spec for the pass")
	}
	spec := reply.Spec
	if err := os.MkdirAll(options.workdir, 0o777); err != nil {
		return 0, err
	}
	scriptPath := filepath.Join(options.workdir, spec.Filename)
	inputPath := filepath.Join(options.workdir, "input.json")
	input := []byte(spec.Input)
	if len(input) == 0 {
		input = []byte("null")
	}
	if err := os.WriteFile(scriptPath, []byte(spec.Script), 0o666); err != nil {
		return 0, err
	}
	if err := os.WriteFile(inputPath, input, 0o666); err != nil {
		return 0, err
	}

	// Output goes to the container's log (kubectl logs) and, through the agent, to the run's log
	// in the store (spool logs), which outlives the pod.
	output, err := tailFile(filepath.Join(options.workdir, "output.log"), func(text string) {
		os.Stdout.WriteString(text)
		control.send(hyperspool.NewRequest("log").With("text", text))
	})
	if err != nil {
		return 0, err
	}
	logID, _ := fileIdentity(int(output.file.Fd()))
	env := os.Environ()
	for _, kv := range [][2]string{
		// This very binary first on the script's PATH: in a pod of the user's own image it is the
		// only spool there is (the agent copied it into the pod's shared volume).
		{"PATH", withOwnDirFirst(pathOf(env))},
		{"SPOOL_SOCKET", options.socket},
		{"SPOOL_RUN_ID", spec.Run},
		{"SPOOL_PASS", spec.Pass.String()},
		{"SPOOL_INPUT_FILE", inputPath},
		{"SPOOL_LOG_ID", logID},
	} {
		env = setEnv(env, kv[0], kv[1])
	}

	// SIGTERM is the pod going away (deleted, evicted, its node drained): the script is ended and
	// its end is not reported, so the operator counts the pass as lost and the run replays
	// elsewhere, rather than failing with "script killed by SIGTERM".
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	mu.Lock()
	script = startScript(append(splitSpaces(spec.Interpreter), scriptPath), options.workdir, env, output.file)
	if stopRequested {
		script.end()
	}
	mu.Unlock()
	evicted := false
	var exit scriptExit
	for waiting := true; waiting; {
		select {
		case <-terms:
			evicted = true
			script.end()
		case exit = <-script.exited:
			waiting = false
		}
	}
	signal.Stop(terms)
	output.close()
	if evicted {
		return 143, nil
	}
	acknowledged, err := control.ask(hyperspool.NewRequest("exit").With("code", exit.codeValue()).With("signal", exit.signalValue()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "spool: could not report the script's end: %v\n", err)
	} else if acknowledged.Error != nil {
		fmt.Fprintf(os.Stderr, "spool: could not report the script's end: %s\n", *acknowledged.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if stopRequested {
		return 0, nil
	}
	if exit.code == nil {
		return 1, nil
	}
	return *exit.code, nil
}

// splitSpaces is text.split(' '): every space separates, so "bash -eu" is two words.
func splitSpaces(text string) []string {
	var words []string
	start := 0
	for i := 0; i <= len(text); i++ {
		if i == len(text) || text[i] == ' ' {
			words = append(words, text[start:i])
			start = i + 1
		}
	}
	return words
}

func connectWithin(path string, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	for {
		conn, err := hyperspool.DialUnix(path)
		if err == nil {
			return conn, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the agent's socket %s did not appear: Error: %v", path, err)
		}
		time.Sleep(agentWaitStep)
	}
}

// withOwnDirFirst puts the directory of the running executable at the front of a PATH list.
func withOwnDirFirst(path string) string {
	self, err := os.Executable()
	if err != nil {
		return path
	}
	dir := filepath.Dir(self)
	if path == "" {
		return dir
	}
	return dir + string(os.PathListSeparator) + path
}
