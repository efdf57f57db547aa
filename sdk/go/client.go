package hyperspool

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// client is the connection of one process to the agent of its pass, opened at the first durable
// call and kept: a call's identity is its place in the order the agent receives calls, so every
// call of the process goes down one connection.
type client struct {
	// mu guards the fields, never a whole call: a StepFn function or a Lock body runs between
	// calls and may make durable calls of its own. Conn serializes the calls themselves.
	mu   sync.Mutex
	conn *Conn
	info *agentInfo // asked at most once per connection
}

// process is the client of this process.
var process client

var errNoSocket = errors.New("SPOOL_SOCKET is not set: durable calls run inside a script started by spool run, spool submit or a cluster run")

// suspend is what a call does when the agent answers "suspended". It must not return: the script
// may not run past a wait that has not returned. Tests replace it with one that panics.
var suspend = blockUntilEnded

// blockUntilEnded waits for the agent to end the process group. If its signal never lands, exit
// 75 (temporary failure) so the pass ends and the run is tried again rather than hanging.
func blockUntilEnded(message string) {
	fmt.Fprintln(os.Stderr, "spool: "+message)
	time.Sleep(60 * time.Second)
	os.Exit(75)
}

// connLocked returns the connection, dialing it the first time; c.mu is held. A failed dial is
// not kept, so a later call dials again; a connection lost mid-call is kept, and stays lost.
func (c *client) connLocked() (*Conn, error) {
	if c.conn != nil {
		return c.conn, nil
	}
	path := os.Getenv("SPOOL_SOCKET")
	if path == "" {
		return nil, &AgentUnavailable{Err: errNoSocket}
	}
	conn, err := Dial(path, DialOptionsFromEnv())
	if err != nil {
		return nil, err
	}
	c.conn = conn
	return conn, nil
}

// exchange sends one request and returns its answer, whatever its status.
func (c *client) exchange(req *Request) (*Answer, error) {
	c.mu.Lock()
	conn, err := c.connLocked()
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return callOn(conn, req)
}

func callOn(conn *Conn, req *Request) (*Answer, error) {
	answer, err := conn.Call(req)
	var unavailable *AgentUnavailable
	switch {
	case err == nil:
		return answer, nil
	case errors.As(err, &unavailable):
		return nil, err
	}
	// A line that is not an answer, or a request that cannot be written: neither is the
	// script's to handle, and neither is the agent going away.
	return nil, internalError(err.Error())
}

// call sends one request. An error answer is a *ScriptError and a suspended one never comes
// back, so the answer returned is "ok" or "execute".
func (c *client) call(req *Request) (*Answer, error) {
	answer, err := c.exchange(req)
	if err != nil {
		return nil, err
	}
	switch answer.Status {
	case StatusOK, StatusExecute:
		return answer, nil
	case StatusError:
		return nil, refusal(answer)
	case StatusSuspended:
		message := answer.Message
		if message == "" {
			message = "script suspended"
		}
		suspend(message)
		panic("hyperspool: the process is being ended; a suspended call cannot return")
	}
	return nil, internalError("unexpected answer from the agent: " + answer.Status)
}

// require fails at the call site when the agent does not know verb or speaks a protocol older
// than 1, so a too-old agent is not sent a request it would misread.
func (c *client) require(what, verb string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info == nil {
		conn, err := c.connLocked()
		if err != nil {
			return err
		}
		answer, err := callOn(conn, NewRequest("agent.info"))
		if err != nil {
			return err
		}
		c.info = parseAgentInfo(answer)
	}
	if c.info.knows(verb) {
		return nil
	}
	return usageError(fmt.Sprintf("%s needs an agent that speaks protocol 1 and knows %s; this agent %s: update spool where the agent runs",
		what, verb, c.info.describe()))
}

// reset forgets the connection, closing it, so the next call dials again (tests: one connection
// per vector).
func (c *client) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
	}
	c.conn, c.info = nil, nil
}

// agentInfo is what agent.info says the agent supports.
type agentInfo struct {
	Protocol int      `json:"protocol"`
	Verbs    []string `json:"verbs"`
}

// parseAgentInfo reads an agent.info answer; an agent that does not know the verb (it answers
// an error) predates protocol 1.
func parseAgentInfo(answer *Answer) *agentInfo {
	info := new(agentInfo)
	if answer.Status != StatusOK || json.Unmarshal([]byte(answer.Stdout), info) != nil {
		return &agentInfo{}
	}
	return info
}

func (i *agentInfo) knows(verb string) bool {
	if i.Protocol < 1 {
		return false
	}
	for _, v := range i.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}

func (i *agentInfo) describe() string {
	if i.Protocol == 0 && len(i.Verbs) == 0 {
		return "predates agent.info (protocol 0)"
	}
	return fmt.Sprintf("speaks protocol %d", i.Protocol)
}
