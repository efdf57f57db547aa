// Command spool-activity-attempt is the command of an activity attempt's pod on a cluster (see
// runActivityAttempt). It is a binary of its own, not a verb of the in-script client, because it
// reports over HTTP(S): net/http and crypto/tls double a Go binary's size and add a third to its
// start-up, which every in-script call of cmd/spool would pay.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	hyperspool "hyperspool.dev/go"
	"hyperspool.dev/go/internal/command"
)

func main() {
	os.Exit(runActivityAttempt(os.Args[1:]))
}

// How long an attempt's pod keeps trying to report its result: an operator handing over
// leadership answers 503 for a few seconds, and a pod that gives up is retried as a new attempt.
const reportFor = 60 * time.Second

// runActivityAttempt is `spool-activity-attempt -- COMMAND...`, the command of an activity
// attempt's pod on a cluster: it runs COMMAND with stderr passed through (the pod's log, its tail
// kept) and stdout captured, then reports the stdout and exit code (and a failed command's stderr
// tail, for people) to the operator at
// $SPOOL_ACTIVITY_REPORT with the pod's token ($SPOOL_TOKEN_FILE). It exits 0 once the result is
// recorded, whatever the command's code (the result is the command's; the pod's is the report's),
// and non-zero when the report failed, so the operator tries the activity again.
func runActivityAttempt(args []string) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, "spool-activity-attempt: usage: spool-activity-attempt -- COMMAND [ARG...]")
		return 2
	}
	url, tokenFile := os.Getenv("SPOOL_ACTIVITY_REPORT"), os.Getenv("SPOOL_TOKEN_FILE")
	if url == "" || tokenFile == "" {
		fmt.Fprintln(os.Stderr, "spool-activity-attempt: SPOOL_ACTIVITY_REPORT and SPOOL_TOKEN_FILE must be set (the operator's Job sets them)")
		return 2
	}
	limit, err := strconv.Atoi(os.Getenv("SPOOL_MAX_RESULT_BYTES"))
	if err != nil || limit <= 0 {
		limit = 1 << 20
	}
	result := runCaptured(args[1:], limit)
	if err := report(url, tokenFile, result); err != nil {
		fmt.Fprintf(os.Stderr, "spool-activity-attempt: %s\n", err)
		return 1
	}
	return 0
}

// limitedBuffer keeps what is written to it up to its limit, and remembers that more came. The
// buffer is a field, not embedded: an embedded bytes.Buffer's ReadFrom would bypass Write.
type limitedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.over || b.buf.Len()+len(p) > b.limit {
		b.over = true
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *limitedBuffer) String() string { return b.buf.String() }

// runCaptured runs the command as spool run does an activity's: stdin empty, stdout captured (an
// output over the limit ends the attempt with exit 1 and a line saying why), the exit code as a
// shell has it (128+N for a signal, 127 for a command not found), and for a failed command the
// tail of its stderr, or spool's own line when it was spool that ended it.
func runCaptured(argv []string, limit int) command.Result {
	path, err := command.LookPath(argv[0], os.Getenv("PATH"))
	if err != nil {
		return failedToRun(fmt.Sprintf("spool: activity command %s: %s", argv[0], command.ExecMessage(err)), 127)
	}
	out := &limitedBuffer{limit: limit}
	cmd := &exec.Cmd{Path: path, Args: argv, Stdout: out, Env: os.Environ()}
	stderr := command.TeeStderr(cmd)
	err = cmd.Run()
	stderr.Finish()
	if out.over {
		return failedToRun(fmt.Sprintf("spool: the activity printed over the %d-byte limit for a recorded result; write the output to a file and record its path or an id instead", limit), 1)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return command.Result{Stdout: []byte(out.String()), ExitCode: command.ExitStatus(exit.ProcessState), StderrTail: stderr.Text()}
	}
	if err != nil {
		return failedToRun(fmt.Sprintf("spool: activity command %s: %s", argv[0], err), 126)
	}
	return command.Result{Stdout: []byte(out.String())}
}

// failedToRun is an attempt spool ended: its line printed, and kept as its tail.
func failedToRun(message string, code int) command.Result {
	fmt.Fprintln(os.Stderr, message)
	return command.Result{ExitCode: code, StderrTail: command.TailOf(message)}
}

// report sends the result until an answer says where it stands: an error or a 503 (no leader
// yet) is tried again, which is safe since a second report of the same attempt is answered 409.
// A 409 means the attempt is over (its result is recorded, or a newer attempt superseded it).
func report(url, tokenFile string, result command.Result) error {
	fields := map[string]any{"exitCode": result.ExitCode}
	// As a step's output travels: bytes that are not plain text (a NUL, not UTF-8) as base64, which
	// a JSON string would otherwise change (Go replaces bad UTF-8) or PostgreSQL refuse (a NUL).
	if hyperspool.IsPlainText(result.Stdout) {
		fields["stdout"] = string(result.Stdout)
	} else {
		fields["stdoutBase64"] = base64.StdEncoding.EncodeToString(result.Stdout)
	}
	if result.ExitCode != 0 && result.StderrTail != "" {
		fields["stderrTail"] = result.StderrTail
	}
	body, _ := json.Marshal(fields)
	deadline := time.Now().Add(reportFor)
	for delay := 100 * time.Millisecond; ; delay = min(delay*2, 2*time.Second) {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			return fmt.Errorf("cannot read the pod's token: %w", err)
		}
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("content-type", "application/json")
		req.Header.Set("authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			switch {
			case resp.StatusCode < 300:
				return nil
			case resp.StatusCode == http.StatusConflict:
				fmt.Fprintf(os.Stderr, "spool-activity-attempt: %s\n", strings.TrimSpace(string(answer)))
				return nil
			case resp.StatusCode != http.StatusServiceUnavailable:
				return fmt.Errorf("the operator refused the result (%d): %s", resp.StatusCode, strings.TrimSpace(string(answer)))
			}
			err = fmt.Errorf("the operator answered %d: %s", resp.StatusCode, strings.TrimSpace(string(answer)))
		}
		if time.Now().Add(delay).After(deadline) {
			return fmt.Errorf("cannot report the result to %s: %w", url, err)
		}
		time.Sleep(delay)
	}
}
