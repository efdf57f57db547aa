package hyperspool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

// An exchange is one request the SDK must send and the line the fake agent answers it with; a
// nil Reply (JSON null) closes the connection instead.
type exchange struct {
	Request json.RawMessage `json:"request"`
	Reply   json.RawMessage `json:"reply"`
}

// fakeAgent serves a script of exchanges on a real unix socket, to one connection, and notes
// every way the SDK strays from it.
type fakeAgent struct {
	listener  net.Listener
	exchanges []exchange
	done      sync.WaitGroup

	mu       sync.Mutex
	problems []string
}

// startFakeAgent listens on a fresh socket, points SPOOL_SOCKET at it and gives the SDK a fresh
// connection to it.
func startFakeAgent(t *testing.T, exchanges []exchange) *fakeAgent {
	t.Helper()
	// Not t.TempDir: its path can outgrow the room sockaddr_un has.
	dir, err := os.MkdirTemp("", "hsgo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "agent.sock")
	listener, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SPOOL_SOCKET", path)
	t.Setenv("SPOOL_CONNECT_ATTEMPTS", "1")
	process.reset()
	a := &fakeAgent{listener: listener, exchanges: exchanges}
	a.done.Add(1)
	go a.serve()
	return a
}

func (a *fakeAgent) problem(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.problems = append(a.problems, fmt.Sprintf(format, args...))
}

func (a *fakeAgent) serve() {
	defer a.done.Done()
	for n := 0; ; n++ {
		conn, err := a.listener.Accept()
		if err != nil {
			return
		}
		if n > 0 {
			// The SDK dialing again, which it must never do.
			a.problem("the SDK connected a second time")
			conn.Close()
			continue
		}
		a.done.Add(1)
		go func() {
			defer a.done.Done()
			a.converse(conn)
		}()
	}
}

func (a *fakeAgent) converse(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for i, x := range a.exchanges {
		line, err := r.ReadBytes('\n')
		if err != nil {
			a.problem("request %d: expected %s, but the SDK sent nothing more (%v)", i+1, x.Request, err)
			return
		}
		if !jsonEqual(line, x.Request) {
			a.problem("request %d: expected %s, got %s", i+1, x.Request, line)
		}
		if isNull(x.Reply) {
			return
		}
		var reply bytes.Buffer
		if err := json.Compact(&reply, x.Reply); err != nil {
			a.problem("reply %d is not JSON: %v", i+1, err)
			return
		}
		if _, err := conn.Write(append(reply.Bytes(), '\n')); err != nil {
			a.problem("answering request %d: %v", i+1, err)
			return
		}
	}
	// The SDK must send nothing more; the test closes its end when the call is over.
	if line, err := r.ReadBytes('\n'); len(line) > 0 {
		a.problem("the SDK sent more than the vector has: %s (%v)", line, err)
	}
}

// finish ends the SDK's connection, waits for the fake agent to see it end, and returns what
// went wrong on the socket.
func (a *fakeAgent) finish() []string {
	process.reset()
	a.listener.Close()
	a.done.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.problems
}

func isNull(raw json.RawMessage) bool {
	var v any
	return len(raw) == 0 || (json.Unmarshal(raw, &v) == nil && v == nil)
}

// jsonEqual compares two JSON texts as values: key order and spacing aside.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
