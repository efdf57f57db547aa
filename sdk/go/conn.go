package hyperspool

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// DialOptions say how often to try reaching the agent. Only the connect is retried: a request
// that was sent may have been recorded, so it is never sent again.
type DialOptions struct {
	// Attempts is how many times to try connecting (at least 1).
	Attempts int
	// Backoff is the wait after the first failed attempt; it doubles after each further one.
	Backoff time.Duration
}

// Defaults of DialOptions; SPOOL_CONNECT_ATTEMPTS and SPOOL_CONNECT_BACKOFF_MS override them.
const (
	DefaultConnectAttempts = 5
	DefaultConnectBackoff  = 50 * time.Millisecond
)

// DialOptionsFromEnv reads SPOOL_CONNECT_ATTEMPTS and SPOOL_CONNECT_BACKOFF_MS, keeping the
// default for a variable that is unset or not a whole number in range.
func DialOptionsFromEnv() DialOptions {
	opts := DialOptions{Attempts: DefaultConnectAttempts, Backoff: DefaultConnectBackoff}
	if n, err := strconv.Atoi(os.Getenv("SPOOL_CONNECT_ATTEMPTS")); err == nil && n >= 1 {
		opts.Attempts = n
	}
	if ms, err := strconv.Atoi(os.Getenv("SPOOL_CONNECT_BACKOFF_MS")); err == nil && ms >= 0 {
		opts.Backoff = time.Duration(ms) * time.Millisecond
	}
	return opts
}

// A Conn is one connection to the agent of a pass. Requests on it are answered one at a time in
// the order they were sent; a Conn may be shared, calls are serialized.
type Conn struct {
	path string
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
	lost bool
}

// DialEnv connects to the agent named by SPOOL_SOCKET, with DialOptionsFromEnv.
func DialEnv() (*Conn, error) {
	path := os.Getenv("SPOOL_SOCKET")
	if path == "" {
		return nil, ErrNoAgent
	}
	return Dial(path, DialOptionsFromEnv())
}

// Dial connects to the agent's socket at path. The error is an *AgentUnavailable.
func Dial(path string, opts DialOptions) (*Conn, error) {
	if opts.Attempts < 1 {
		opts.Attempts = 1
	}
	backoff := opts.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		var c net.Conn
		if c, err = DialUnix(path); err == nil {
			return &Conn{path: path, conn: c, r: bufio.NewReaderSize(c, 64*1024)}, nil
		}
		if attempt >= opts.Attempts {
			return nil, &AgentUnavailable{Path: path, Err: err}
		}
		time.Sleep(backoff)
		backoff *= 2
	}
}

// Call sends one request and returns its answer. Once the request is written the call is never
// repeated: if the agent goes away the error is an *AgentUnavailable (Sent true), and the Conn
// is of no further use.
func (c *Conn) Call(req *Request) (*Answer, error) {
	line, err := req.MarshalJSON()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost {
		return nil, &AgentUnavailable{Path: c.path, Sent: true, Err: io.ErrClosedPipe}
	}
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		return nil, c.gone(err)
	}
	text, err := c.r.ReadBytes('\n')
	if err != nil {
		return nil, c.gone(err)
	}
	answer := new(Answer)
	if err := json.Unmarshal(text, answer); err != nil {
		return nil, &BadAnswerError{Line: string(text[:len(text)-1]), Err: err}
	}
	return answer, nil
}

func (c *Conn) gone(err error) error {
	c.lost = true
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &AgentUnavailable{Path: c.path, Sent: true, Err: err}
}

// Close ends the connection.
func (c *Conn) Close() error {
	return c.conn.Close()
}
