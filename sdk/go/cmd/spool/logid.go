package main

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity is "dev:ino" of what fd refers to, as the agent writes $SPOOL_LOG_ID.
func fileIdentity(fd int) (string, bool) {
	var stat syscall.Stat_t
	if err := syscall.Fstat(fd, &stat); err != nil {
		return "", false
	}
	return fmt.Sprintf("%d:%d", stat.Dev, stat.Ino), true
}

// writesToRunLog says whether fd writes into the run's log, where a replayed result was printed
// on its first pass already.
func writesToRunLog(fd int) bool {
	logID := os.Getenv("SPOOL_LOG_ID")
	if logID == "" {
		return false
	}
	id, ok := fileIdentity(fd)
	return ok && id == logID
}
