//go:build linux

package hyperspool

import (
	"net"
	"os"
	"syscall"
)

// sunPathMax is the room for a path in sockaddr_un, less its terminating NUL.
const sunPathMax = len(syscall.RawSockaddrUnix{}.Path) - 1

// DialUnix connects a stream socket to path with one blocking connect(2). Unlike net.Dial it
// cuts a path that is too long to the room sockaddr_un has, as libuv does, so the native and
// the Node client fail the same way; its error is a *ConnectError carrying the errno.
func DialUnix(path string) (net.Conn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &ConnectError{Path: path, Err: err}
	}
	name := path
	if len(name) > sunPathMax {
		name = name[:sunPathMax]
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: name})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &ConnectError{Path: path, Err: err}
	}
	file := os.NewFile(uintptr(fd), path)
	defer file.Close()
	c, err := net.FileConn(file)
	if err != nil {
		return nil, &ConnectError{Path: path, Err: err}
	}
	return c, nil
}
