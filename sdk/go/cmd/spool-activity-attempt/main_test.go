package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"hyperspool.dev/go/internal/selfexec"
)

// TestMain lets the tests run this very test binary as the reporter: with
// SPOOL_TEST_AS_REPORTER set it is the reporter, not the tests.
func TestMain(m *testing.M) {
	if os.Getenv("SPOOL_TEST_AS_REPORTER") == "1" {
		os.Exit(runActivityAttempt(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// reporter runs the reporter with args and env, and no other SPOOL_* setting.
func reporter(t *testing.T, env map[string]string, args ...string) selfexec.Result {
	t.Helper()
	return selfexec.Run(t, selfexec.Command(t, "SPOOL_TEST_AS_REPORTER", env, args...))
}

// reportServer answers reports with the given statuses in turn (200 after them), and keeps
// what each report said and the token it carried.
type reportServer struct {
	mu       sync.Mutex
	statuses []int
	bodies   []map[string]any
	tokens   []string
}

func (s *reportServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.bodies = append(s.bodies, body)
	s.tokens = append(s.tokens, r.Header.Get("authorization"))
	status := http.StatusOK
	if len(s.statuses) > 0 {
		status, s.statuses = s.statuses[0], s.statuses[1:]
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"recorded":true}`))
}

func attempt(t *testing.T, server *reportServer, env map[string]string, command ...string) selfexec.Result {
	t.Helper()
	http := httptest.NewServer(server)
	t.Cleanup(http.Close)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("pod-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"SPOOL_ACTIVITY_REPORT": http.URL + "/v1/agent/runs/r/activities/a/attempts/1", "SPOOL_TOKEN_FILE": token}
	for k, v := range env {
		all[k] = v
	}
	return reporter(t, all, append([]string{"--"}, command...)...)
}

func TestActivityAttemptReportsStdoutAndExitCode(t *testing.T) {
	tests := []struct {
		name     string
		command  []string
		env      map[string]string
		stdout   string
		exitCode float64
		stderr   string
		// The stderr tail a failed attempt reports (nil: none is sent).
		tail any
	}{
		{"output, stderr apart", []string{"sh", "-c", "echo eu-north: 29ms; echo noise >&2"}, nil, "eu-north: 29ms\n", 0, "noise", nil},
		{"a failure's code", []string{"sh", "-c", "echo partial; exit 75"}, nil, "partial\n", 75, "", nil},
		{"a failure's stderr, a NUL and a byte not UTF-8 as text", []string{"sh", "-c", `printf 'raw \000 \377 bytes\nno account 42\n' >&2; exit 64`}, nil, "", 64, "no account 42", "raw \uFFFD \uFFFD bytes\nno account 42"},
		{"a signal as a shell has it", []string{"sh", "-c", "kill -9 $$"}, nil, "", 137, "", nil},
		{"not found", []string{"no-such-command-here"}, nil, "", 127, "no-such-command-here", "spool: activity command no-such-command-here: not found"},
		{"over the limit", []string{"sh", "-c", "echo 0123456789"}, map[string]string{"SPOOL_MAX_RESULT_BYTES": "4"}, "", 1, "over the 4-byte limit", "spool: the activity printed over the 4-byte limit for a recorded result; write the output to a file and record its path or an id instead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := &reportServer{}
			got := attempt(t, server, tt.env, tt.command...)
			if got.Code != 0 || len(server.bodies) != 1 {
				t.Fatalf("exit %d, %d reports; stderr %q", got.Code, len(server.bodies), got.Stderr)
			}
			if body := server.bodies[0]; body["stdout"] != tt.stdout || body["exitCode"] != tt.exitCode || body["stderrTail"] != tt.tail {
				t.Errorf("reported %v, want stdout %q exit %v stderrTail %v", body, tt.stdout, tt.exitCode, tt.tail)
			}
			if server.tokens[0] != "Bearer pod-token" {
				t.Errorf("token %q", server.tokens[0])
			}
			if !strings.Contains(got.Stderr, tt.stderr) || got.Stdout != "" {
				t.Errorf("stdout %q stderr %q, want stderr with %q", got.Stdout, got.Stderr, tt.stderr)
			}
		})
	}
}

func TestActivityAttemptReportsOutputThatIsNotTextAsBase64(t *testing.T) {
	server := &reportServer{}
	got := attempt(t, server, nil, "sh", "-c", `printf 'a\000b \377\n'`)
	if got.Code != 0 || len(server.bodies) != 1 {
		t.Fatalf("exit %d, %d reports; stderr %q", got.Code, len(server.bodies), got.Stderr)
	}
	body := server.bodies[0]
	if _, text := body["stdout"]; text || body["stdoutBase64"] != base64.StdEncoding.EncodeToString([]byte("a\x00b \xff\n")) {
		t.Errorf("reported %v, want the bytes as stdoutBase64 and no stdout", body)
	}
}

func TestActivityAttemptRetriesUnavailableAndStopsAtConflict(t *testing.T) {
	server := &reportServer{statuses: []int{503, 503, 409}}
	got := attempt(t, server, nil, "echo", "hi")
	if got.Code != 0 || len(server.bodies) != 3 {
		t.Fatalf("exit %d after %d reports; stderr %q", got.Code, len(server.bodies), got.Stderr)
	}
	refused := attempt(t, &reportServer{statuses: []int{403}}, nil, "echo", "hi")
	if refused.Code == 0 || !strings.Contains(refused.Stderr, "refused the result (403)") {
		t.Fatalf("a refused report: exit %d, stderr %q", refused.Code, refused.Stderr)
	}
}

func TestActivityAttemptUsage(t *testing.T) {
	got := reporter(t, nil, "echo")
	if got.Code != 2 || !strings.Contains(got.Stderr, "usage: spool-activity-attempt -- COMMAND") {
		t.Fatalf("exit %d, stderr %q", got.Code, got.Stderr)
	}
}
