package main

import "syscall"

func init() {
	signalNames[syscall.SIGSTKFLT] = "SIGSTKFLT"
	signalNames[syscall.SIGPWR] = "SIGPWR"
}
