package hyperspool

import (
	"errors"
	"syscall"
)

// A UsageError is bad input: it says what was wrong in one line, and nothing was recorded.
type UsageError struct {
	Message string
}

func (e *UsageError) Error() string { return e.Message }

// AgentUnavailable means the agent could not be reached, or went away during a call. The script
// should exit 69 (ExitUnavailable): its run is replayed in another pass.
type AgentUnavailable struct {
	// Path is the socket; Sent says whether a request had been written when the agent was lost.
	Path string
	Sent bool
	Err  error
}

func (e *AgentUnavailable) Error() string {
	if e.Path == "" && e.Err != nil {
		return e.Err.Error() // no socket to name: the cause says why
	}
	if e.Sent {
		return "the agent went away during the call"
	}
	return "cannot reach the agent at " + e.Path + ": " + e.Err.Error()
}

func (e *AgentUnavailable) Unwrap() error { return e.Err }

// ErrNoAgent is returned by DialEnv when SPOOL_SOCKET is not set: the program is not running
// inside a pass.
var ErrNoAgent = errors.New("no agent to talk to (SPOOL_SOCKET is not set)")

// A ConnectError is a failed connect(2) on a socket, worded as Node words it
// ("connect ENOENT /path"), so both clients print the same line.
type ConnectError struct {
	Path string
	Err  error
}

func (e *ConnectError) Error() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		if name := ErrnoName(errno); name != "" {
			return "connect " + name + " " + e.Path
		}
	}
	return "connect " + e.Path + ": " + e.Err.Error()
}

func (e *ConnectError) Unwrap() error { return e.Err }

// A BadAnswerError is a line from the agent that is not an answer.
type BadAnswerError struct {
	Line string
	Err  error
}

func (e *BadAnswerError) Error() string {
	line := e.Line
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	return "the agent sent something that is not an answer (" + e.Err.Error() + "): " + line
}

func (e *BadAnswerError) Unwrap() error { return e.Err }

// ErrnoName is the symbolic name of errno ("ENOENT"), as Node puts in its messages, or "" for
// one it does not know.
func ErrnoName(errno syscall.Errno) string {
	return errnoNames[errno]
}

var errnoNames = map[syscall.Errno]string{
	syscall.EPERM:        "EPERM",
	syscall.ENOENT:       "ENOENT",
	syscall.EINTR:        "EINTR",
	syscall.EIO:          "EIO",
	syscall.E2BIG:        "E2BIG",
	syscall.ENOEXEC:      "ENOEXEC",
	syscall.EBADF:        "EBADF",
	syscall.EAGAIN:       "EAGAIN",
	syscall.ENOMEM:       "ENOMEM",
	syscall.EACCES:       "EACCES",
	syscall.EFAULT:       "EFAULT",
	syscall.EBUSY:        "EBUSY",
	syscall.EEXIST:       "EEXIST",
	syscall.ENOTDIR:      "ENOTDIR",
	syscall.EISDIR:       "EISDIR",
	syscall.EINVAL:       "EINVAL",
	syscall.ENFILE:       "ENFILE",
	syscall.EMFILE:       "EMFILE",
	syscall.ETXTBSY:      "ETXTBSY",
	syscall.ENOSPC:       "ENOSPC",
	syscall.EROFS:        "EROFS",
	syscall.EPIPE:        "EPIPE",
	syscall.ENAMETOOLONG: "ENAMETOOLONG",
	syscall.ELOOP:        "ELOOP",
	syscall.ENOTSOCK:     "ENOTSOCK",
	syscall.EPROTOTYPE:   "EPROTOTYPE",
	syscall.EADDRINUSE:   "EADDRINUSE",
	syscall.ECONNRESET:   "ECONNRESET",
	syscall.ETIMEDOUT:    "ETIMEDOUT",
	syscall.ECONNREFUSED: "ECONNREFUSED",
}
