//go:build !linux

package hyperspool

import "net"

// DialUnix connects a stream socket to path; its error is a *ConnectError.
func DialUnix(path string) (net.Conn, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, &ConnectError{Path: path, Err: err}
	}
	return c, nil
}
