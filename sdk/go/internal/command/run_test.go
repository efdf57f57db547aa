//go:build linux

package command

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"testing/quick"
	"time"
)

// runSh runs a shell line as a step runs its command, with this process's stdout and stderr
// pointed at files (what the step passes on is checked there).
func runSh(t *testing.T, line string) (Result, string, string, time.Duration) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	outFile, _ := os.Create(dir + "/out")
	errFile, _ := os.Create(dir + "/err")
	savedOut, savedErr := os.Stdout, os.Stderr
	keepOut, keepErr := dup(t, 1), dup(t, 2)
	redirect(t, outFile, 1)
	redirect(t, errFile, 2)
	started := time.Now()
	result, err := Run(sh, []string{"sh", "-c", line}, os.Environ())
	took := time.Since(started)
	redirect(t, keepOut, 1)
	redirect(t, keepErr, 2)
	os.Stdout, os.Stderr = savedOut, savedErr
	if err != nil {
		t.Fatal(err)
	}
	passedOut, _ := os.ReadFile(dir + "/out")
	passedErr, _ := os.ReadFile(dir + "/err")
	return result, string(passedOut), string(passedErr), took
}

func TestRunKeepsAndPassesOnWhatTheCommandPrinted(t *testing.T) {
	// 200 KiB on each stream, interleaved, bytes that are not UTF-8 and a NUL: nothing blocks, nothing is lost.
	line := `i=0; while [ $i -lt 200 ]; do head -c 1024 /dev/zero | tr '\0' 'o'; printf '\377\000'; head -c 1024 /dev/zero | tr '\0' 'e' >&2; echo >&2; i=$((i+1)); done; echo last-error-line >&2; exit 3`
	result, out, errs, _ := runSh(t, line)
	if result.ExitCode != 3 {
		t.Errorf("exit code %d, want 3", result.ExitCode)
	}
	want := strings.Repeat(strings.Repeat("o", 1024)+"\xff\x00", 200)
	if string(result.Stdout) != want || out != want {
		t.Errorf("stdout kept %d bytes, passed on %d, want %d of each", len(result.Stdout), len(out), len(want))
	}
	if len(errs) != 200*1025+len("last-error-line\n") {
		t.Errorf("stderr passed on %d bytes", len(errs))
	}
	if result.StderrTail != "last-error-line" {
		t.Errorf("stderr tail %q", result.StderrTail)
	}
}

// Any bytes, any length (past a pipe's 64 KiB too): kept and passed on exactly as the command wrote them.
func TestRunKeepsAnyBytes(t *testing.T) {
	dir := t.TempDir()
	property := func(seed []byte, repeat uint8) bool {
		written := bytes.Repeat(seed, 1+int(repeat)*int(repeat))
		file := dir + "/bytes"
		if err := os.WriteFile(file, written, 0o600); err != nil {
			t.Fatal(err)
		}
		result, out, errs, _ := runSh(t, "cat "+file+"; cat "+file+" >&2")
		return bytes.Equal(result.Stdout, written) && out == string(written) && errs == string(written) && result.ExitCode == 0
	}
	if err := quick.Check(property, &quick.Config{MaxCount: 25}); err != nil {
		t.Error(err)
	}
}

func TestRunAnswersASignalAsAShellWould(t *testing.T) {
	result, out, _, _ := runSh(t, `echo partial; kill -9 $$`)
	if result.ExitCode != 137 || out != "partial\n" || !bytes.Equal(result.Stdout, []byte("partial\n")) {
		t.Errorf("got %+v, passed on %q", result, out)
	}
}

func TestRunWaitsForTheCommandAfterItClosesItsOutput(t *testing.T) {
	for _, pidfd := range []bool{true, false} {
		if !pidfd {
			// Where there is no pidfd (Linux before 5.3), its exit is looked for on a timer.
			saved := openPidfd
			openPidfd = func(int) int { return -1 }
			t.Cleanup(func() { openPidfd = saved })
		}
		result, _, _, took := runSh(t, `echo before; exec >&- 2>&-; sleep 0.3; exit 4`)
		if result.ExitCode != 4 || string(result.Stdout) != "before\n" || took < 300*time.Millisecond {
			t.Errorf("pidfd %v: got %+v after %v, want exit 4 after the sleep", pidfd, result, took)
		}
	}
}

func TestRunDoesNotWaitForAProcessLeftHoldingStderr(t *testing.T) {
	result, _, _, took := runSh(t, `sleep 5 >/dev/null & echo done`)
	if result.ExitCode != 0 || string(result.Stdout) != "done\n" {
		t.Errorf("got %+v", result)
	}
	if took > 2*time.Second {
		t.Errorf("took %v: it waited for the background process", took)
	}
}

func dup(t *testing.T, fd int) *os.File {
	t.Helper()
	copied, err := syscall.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(copied), "saved")
}

func redirect(t *testing.T, to *os.File, fd int) {
	t.Helper()
	if err := syscall.Dup3(int(to.Fd()), fd, 0); err != nil {
		t.Fatal(err)
	}
}
