//go:build linux

package command

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Run starts path (found already) with argv and env, stdin this process's, and waits for it as a
// step does: stdout and stderr go on to this process's own as they come, stdout kept whole, the
// end of stderr kept as the tail; it ends once the program has exited and closed stdout, reading
// stderr on at most stderrGrace after that (a process it left in the background may hold stderr).
// A start that fails answers the errno (ENOENT, EACCES) as os/exec would.
//
// On Linux this is the system calls themselves, one thread polling both pipes and the child's
// pidfd: os/exec's Cmd, its pidfd probing, its copying goroutines and the runtime's poller for
// them cost a fresh step ~0.4 ms of CPU more (docs/benchmarks.md).
func Run(path string, argv, env []string) (Result, error) {
	var out, errs [2]int
	if err := syscall.Pipe2(out[:], syscall.O_CLOEXEC); err != nil {
		return Result{}, err
	}
	if err := syscall.Pipe2(errs[:], syscall.O_CLOEXEC); err != nil {
		closeAll(out[0], out[1])
		return Result{}, err
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, uintptr(out[1]), uintptr(errs[1])}})
	closeAll(out[1], errs[1])
	if err != nil {
		closeAll(out[0], errs[0])
		return Result{}, err
	}
	child := waitFor(pid, out[0], errs[0])
	var tail Tail
	child.drain(&tail)
	return Result{Stdout: child.stdout, ExitCode: exitCodeOf(child.status), StderrTail: tail.Text()}, nil
}

// A started child and the ends of its output pipes still open (-1 once at end of file).
type child struct {
	pid, pidfd  int
	out, errs   int
	exited      bool
	status      syscall.WaitStatus
	stdout      []byte
	graceEnds   time.Time
	checkPeriod time.Duration
}

func waitFor(pid, out, errs int) *child {
	return &child{pid: pid, pidfd: openPidfd(pid), out: out, errs: errs, checkPeriod: time.Millisecond}
}

// openPidfd is pidfd_open(2) (one number on every Linux architecture): a descriptor readable once
// the child exits, or -1 where there is none (Linux before 5.3), and its exit is looked for on a
// timer. A variable, so a test can take the timer's way.
var openPidfd = func(pid int) int {
	fd, _, errno := syscall.Syscall(434, uintptr(pid), 0, 0)
	if errno != 0 {
		return -1
	}
	return int(fd)
}

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollIn = 0x1

func (c *child) drain(tail *Tail) {
	defer func() { closeAll(c.out, c.errs, c.pidfd) }()
	buffer := make([]byte, 64*1024)
	for c.out >= 0 || !c.exited || (c.errs >= 0 && time.Now().Before(c.graceEnds)) {
		if c.out < 0 && c.errs < 0 && !c.exited {
			// Nothing left to read that the child could block on: wait for its exit outright.
			c.reap(0)
			continue
		}
		fds := make([]pollFd, 0, 3)
		for _, fd := range []int{c.out, c.errs} {
			if fd >= 0 {
				fds = append(fds, pollFd{fd: int32(fd), events: pollIn})
			}
		}
		if !c.exited && c.pidfd >= 0 {
			fds = append(fds, pollFd{fd: int32(c.pidfd), events: pollIn})
		}
		if _, err := poll(fds, c.timeout()); err != nil && err != syscall.EINTR {
			// Cannot happen with these few descriptors; should it, read no more (closed, a write
			// of the child's fails) and still answer how it exited.
			closeAll(c.out, c.errs)
			c.out, c.errs = -1, -1
			if !c.exited {
				c.reap(0)
			}
			return
		}
		for _, ready := range fds {
			switch {
			case ready.revents == 0:
			case int(ready.fd) == c.out:
				c.out = c.copy(c.out, os.Stdout, buffer, func(bytes []byte) { c.stdout = append(c.stdout, bytes...) })
			case int(ready.fd) == c.errs:
				c.errs = c.copy(c.errs, os.Stderr, buffer, func(bytes []byte) { _, _ = tail.Write(bytes) })
			}
		}
		if !c.exited {
			c.reap(syscall.WNOHANG)
		}
		if c.exited && c.out < 0 && c.graceEnds.IsZero() {
			c.graceEnds = time.Now().Add(stderrGrace)
		}
	}
}

// timeout is how long one poll may wait: until stderr's grace ends once that has begun, until the
// next look for an exit without a pidfd (1 ms doubling to 50 ms), else for as long as it takes.
func (c *child) timeout() time.Duration {
	switch {
	case !c.graceEnds.IsZero():
		return max(0, time.Until(c.graceEnds))
	case !c.exited && c.pidfd < 0:
		period := c.checkPeriod
		c.checkPeriod = min(2*c.checkPeriod, 50*time.Millisecond)
		return period
	}
	return -1
}

// reap collects the child's exit if it has come (at once with WNOHANG).
func (c *child) reap(options int) {
	var status syscall.WaitStatus
	for {
		pid, err := syscall.Wait4(c.pid, &status, options, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid == c.pid || err != nil {
			c.exited, c.status = true, status
		}
		return
	}
}

// copy reads what one pipe holds now into keep and on to this process's own stdout or stderr; it
// answers the pipe's descriptor, or -1 once it is at its end (and closed). Written through
// os.File as os/exec's copy did: should the reader of this process's stdout be gone (`spool step x
// -- yes | head -1`), the write raises SIGPIPE and this process ends, and the command with it,
// rather than reading on for ever.
func (c *child) copy(from int, to *os.File, buffer []byte, keep func([]byte)) int {
	n, err := syscall.Read(from, buffer)
	if err == syscall.EINTR || err == syscall.EAGAIN {
		return from
	}
	if n <= 0 {
		syscall.Close(from)
		return -1
	}
	keep(buffer[:n])
	_, _ = to.Write(buffer[:n])
	return from
}

// poll is ppoll(2), waiting at most timeout (forever when negative).
func poll(fds []pollFd, timeout time.Duration) (int, error) {
	var limit *syscall.Timespec
	if timeout >= 0 {
		spec := syscall.NsecToTimespec(int64(timeout))
		limit = &spec
	}
	var first unsafe.Pointer
	if len(fds) > 0 {
		first = unsafe.Pointer(&fds[0])
	}
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(first), uintptr(len(fds)), uintptr(unsafe.Pointer(limit)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func closeAll(fds ...int) {
	for _, fd := range fds {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}
