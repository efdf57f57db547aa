package hyperspool

import (
	"bufio"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConnCallsInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.sock")
	listener, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	got := make(chan string, 2)
	go func() {
		c, err := listener.Accept()
		if err != nil {
			return
		}
		r := bufio.NewReader(c)
		line, _ := r.ReadString('\n')
		got <- line
		c.Write([]byte(`{"status":"execute","position":4,"idempotencyKey":"k"}` + "\n"))
		line, _ = r.ReadString('\n')
		got <- line
		c.Close() // gone before answering
	}()
	conn, err := Dial(path, DialOptions{Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	answer, err := conn.Call(NewRequest("step").With("name", "a"))
	if err != nil || answer.Status != StatusExecute || answer.Position != 4 || answer.IdempotencyKey != "k" {
		t.Fatalf("answer %+v, %v", answer, err)
	}
	_, err = conn.Call(NewRequest("done").With("position", answer.Position).With("stdout", "x").With("exitCode", 0))
	var unavailable *AgentUnavailable
	if !errors.As(err, &unavailable) || !unavailable.Sent || err.Error() != "the agent went away during the call" {
		t.Errorf("a dropped socket mid-call: %v", err)
	}
	if line := <-got; line != `{"verb":"step","name":"a"}`+"\n" {
		t.Errorf("first line %q", line)
	}
	if line := <-got; line != `{"verb":"done","position":4,"stdout":"x","exitCode":0}`+"\n" {
		t.Errorf("second line %q", line)
	}
}

func TestDialRetriesThenFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.sock")
	start := time.Now()
	_, err := Dial(path, DialOptions{Attempts: 3, Backoff: 20 * time.Millisecond})
	if elapsed := time.Since(start); elapsed < 60*time.Millisecond {
		t.Errorf("3 attempts with 20ms doubling took only %v", elapsed)
	}
	var unavailable *AgentUnavailable
	var connect *ConnectError
	if !errors.As(err, &unavailable) || !errors.As(err, &connect) {
		t.Fatalf("error %T %v", err, err)
	}
	if want := "cannot reach the agent at " + path + ": connect ENOENT " + path; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestDialWaitsForALateAgent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "late.sock")
	go func() {
		time.Sleep(30 * time.Millisecond)
		if l, err := net.Listen("unix", path); err == nil {
			defer l.Close()
			c, _ := l.Accept()
			if c != nil {
				c.Close()
			}
		}
	}()
	conn, err := Dial(path, DialOptions{Attempts: 5, Backoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("connect retried past the agent's start: %v", err)
	}
	conn.Close()
}

func TestDialOptionsFromEnv(t *testing.T) {
	t.Setenv("SPOOL_CONNECT_ATTEMPTS", "2")
	t.Setenv("SPOOL_CONNECT_BACKOFF_MS", "7")
	if opts := DialOptionsFromEnv(); opts.Attempts != 2 || opts.Backoff != 7*time.Millisecond {
		t.Errorf("%+v", opts)
	}
	t.Setenv("SPOOL_CONNECT_ATTEMPTS", "zero")
	if opts := DialOptionsFromEnv(); opts.Attempts != DefaultConnectAttempts {
		t.Errorf("a bad value keeps the default: %+v", opts)
	}
}

func TestDialEnvWithoutSocket(t *testing.T) {
	t.Setenv("SPOOL_SOCKET", "")
	if _, err := DialEnv(); !errors.Is(err, ErrNoAgent) || !strings.Contains(err.Error(), "SPOOL_SOCKET") {
		t.Errorf("%v", err)
	}
}
