package hyperspool

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script builds a fake agent's exchanges from request and reply lines.
func script(lines ...string) []exchange {
	var out []exchange
	for i := 0; i+1 < len(lines); i += 2 {
		out = append(out, exchange{Request: json.RawMessage(lines[i]), Reply: json.RawMessage(lines[i+1])})
	}
	return out
}

func expectNoProblems(t *testing.T, agent *fakeAgent) {
	t.Helper()
	for _, p := range agent.finish() {
		t.Error(p)
	}
}

const infoV2 = `{"status":"ok","stdout":"{\"protocol\":2,\"verbs\":[\"wait.signal\",\"wait.event\",\"state.add\",\"activity.wait\"]}\n","exitCode":0}`

func TestWithoutSocketAgentUnavailable(t *testing.T) {
	t.Setenv("SPOOL_SOCKET", "")
	process.reset()
	_, err := Step("x", "true")
	var unavailable *AgentUnavailable
	if !errors.As(err, &unavailable) || !strings.Contains(err.Error(), "SPOOL_SOCKET is not set") {
		t.Fatalf("got %v (%T)", err, err)
	}
}

func TestConnectRetriesThenAgentUnavailable(t *testing.T) {
	t.Setenv("SPOOL_SOCKET", filepath.Join(t.TempDir(), "missing.sock"))
	t.Setenv("SPOOL_CONNECT_ATTEMPTS", "3")
	t.Setenv("SPOOL_CONNECT_BACKOFF_MS", "20")
	process.reset()
	start := time.Now()
	err := Annotate("x")
	var unavailable *AgentUnavailable
	if !errors.As(err, &unavailable) || unavailable.Sent {
		t.Fatalf("got %v (%T)", err, err)
	}
	if elapsed := time.Since(start); elapsed < 60*time.Millisecond {
		t.Errorf("3 attempts with a 20 ms doubling backoff took %v", elapsed)
	}
}

func TestOneConnectionAndAgentInfoOnce(t *testing.T) {
	agent := startFakeAgent(t, script(
		`{"verb":"agent.info"}`, infoV2,
		`{"verb":"wait.signal","name":"a","timeoutMs":5}`, `{"status":"ok","stdout":"1\n","exitCode":0}`,
		`{"verb":"annotate","text":"between"}`, `{"status":"ok","exitCode":0}`,
		`{"verb":"state.add","key":"k"}`, `{"status":"ok","exitCode":0}`,
		`{"verb":"activity.wait","all":true}`, `{"status":"ok","exitCode":0}`,
	))
	if payload, ok, err := WaitSignalTimeout("a", 5*time.Millisecond); payload != "1" || !ok || err != nil {
		t.Errorf("WaitSignalTimeout: %q, %v, %v", payload, ok, err)
	}
	if err := Annotate("between"); err != nil {
		t.Error(err)
	}
	if added, err := StateAdd("k", nil); !added || err != nil {
		t.Errorf("StateAdd: %v, %v", added, err)
	}
	if err := ActivityWaitAll(); err != nil {
		t.Error(err)
	}
	expectNoProblems(t, agent)
}

func TestNoReconnectAfterADrop(t *testing.T) {
	agent := startFakeAgent(t, script(`{"verb":"annotate","text":"a"}`, `null`))
	var unavailable *AgentUnavailable
	if err := Annotate("a"); !errors.As(err, &unavailable) {
		t.Fatalf("first call: %v (%T)", err, err)
	}
	if err := Annotate("b"); !errors.As(err, &unavailable) {
		t.Fatalf("a call after the drop: %v (%T)", err, err)
	}
	expectNoProblems(t, agent)
}

// A lock body and a step_fn function run with the connection free: they may make durable calls.
func TestDurableCallsInsideLockAndStepFn(t *testing.T) {
	agent := startFakeAgent(t, script(
		`{"verb":"lock","group":"tally","command":false}`, `{"status":"ok","exitCode":0}`,
		`{"verb":"step_fn","name":"count"}`, `{"status":"execute","position":1,"idempotencyKey":"k"}`,
		`{"verb":"state.get","key":"total","entity":"tally"}`, `{"status":"ok","stdout":"41\n","exitCode":0}`,
		`{"verb":"done","position":1,"value":{"total":42}}`, `{"status":"ok","exitCode":0}`,
	))
	type count struct {
		Total int `json:"total"`
	}
	var got count
	err := Lock("tally", func() error {
		var err error
		got, err = StepFn("count", func() (count, error) {
			raw, ok, err := StateGet("total", Entity("tally"))
			if err != nil || !ok {
				return count{}, err
			}
			var n int
			err = json.Unmarshal(raw, &n)
			return count{n + 1}, err
		})
		return err
	})
	if err != nil || got.Total != 42 {
		t.Errorf("got %+v, %v", got, err)
	}
	expectNoProblems(t, agent)
}

func TestStepFnReturnsTheDecodedJSON(t *testing.T) {
	agent := startFakeAgent(t, script(
		`{"verb":"step_fn","name":"env"}`, `{"status":"execute","position":0,"idempotencyKey":"k"}`,
		`{"verb":"done","position":0,"value":{"url":"https://x","n":3}}`, `{"status":"ok","exitCode":0}`,
		`{"verb":"step_fn","name":"env"}`, `{"status":"ok","value":{"url":"https://y","n":4},"exitCode":0,"replayed":true}`,
	))
	first, err := StepFn("env", func() (any, error) {
		return map[string]any{"url": "https://x", "n": 3}, nil
	})
	// The first pass gets what a replay would: JSON's float64, not the int the function returned.
	if m, ok := first.(map[string]any); err != nil || !ok || m["n"] != float64(3) {
		t.Errorf("first pass: %#v, %v", first, err)
	}
	type env struct {
		URL string `json:"url"`
		N   int    `json:"n"`
	}
	replayed, err := StepFn("env", func() (env, error) { t.Error("the function ran on a replay"); return env{}, nil })
	if err != nil || replayed != (env{"https://y", 4}) {
		t.Errorf("replay: %+v, %v", replayed, err)
	}
	expectNoProblems(t, agent)
}

func TestStepFnRefusesWhatJSONCannotKeep(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"nan", map[string]float64{"x": nan()}, "step_fn 'nan' returned a value JSON cannot hold"},
		{"func", []any{func() {}}, "step_fn 'func' returned a value JSON cannot hold"},
		{"big", map[string]uint64{"id": 1<<53 + 1}, "step_fn 'big' returned the integer 9007199254740993"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent := startFakeAgent(t, script(
				`{"verb":"step_fn","name":"`+tt.name+`"}`, `{"status":"execute","position":0,"idempotencyKey":"k"}`,
			))
			_, err := StepFn(tt.name, func() (any, error) { return tt.value, nil })
			var script *ScriptError
			if !errors.As(err, &script) || script.Kind != ErrorKindUsage || !strings.Contains(script.Message, tt.want) {
				t.Errorf("got %v (%T), want a usage ScriptError containing %q", err, err, tt.want)
			}
			expectNoProblems(t, agent)
		})
	}
}

func TestInexactInteger(t *testing.T) {
	tests := []struct {
		json string
		want string
	}{
		{`{"a":[1,2,9007199254740991]}`, ""},
		{`-9007199254740993`, "-9007199254740993"},
		{`[9007199254740993]`, "9007199254740993"},
		{`1152921504606846976`, ""}, // 2^60: a double holds it exactly
		{`100000000000000000000`, ""},
		{`{"f":1.5e300,"s":"9007199254740993"}`, ""},
	}
	for _, tt := range tests {
		if got := inexactInteger(json.RawMessage(tt.json)); got != tt.want {
			t.Errorf("inexactInteger(%s) = %q, want %q", tt.json, got, tt.want)
		}
	}
}

func TestStoredText(t *testing.T) {
	tests := []struct {
		value any
		want  string
	}{
		{"ada", "ada"},
		{json.RawMessage(`"ada"`), "ada"},
		{42, "42"},
		{map[string]string{"a": "<b>"}, `{"a":"<b>"}`},
		{nil, "null"},
	}
	for _, tt := range tests {
		if got, err := storedText("x", tt.value); got != tt.want || err != nil {
			t.Errorf("storedText(%#v) = %q, %v; want %q", tt.value, got, err, tt.want)
		}
	}
}

// The real suspension: the call writes its line to stderr and never returns. The test runs
// itself as a child process that makes the call, and ends it once it has blocked.
func TestSuspensionBlocksUntilTheProcessIsEnded(t *testing.T) {
	if os.Getenv("HYPERSPOOL_TEST_SUSPEND_CHILD") == "1" {
		startFakeAgent(t, script(`{"verb":"sleep","ms":1000}`,
			`{"status":"suspended","message":"script suspended awaiting timer 2030-01-01T00:00:01.000Z"}`))
		err := Sleep(time.Second)
		os.Stdout.WriteString("returned: " + errString(err) + "\n")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuspensionBlocksUntilTheProcessIsEnded$")
	cmd.Env = append(os.Environ(), "HYPERSPOOL_TEST_SUSPEND_CHILD=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stderr).ReadString('\n')
	if line != "spool: script suspended awaiting timer 2030-01-01T00:00:01.000Z\n" {
		t.Fatalf("stderr %q", line)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the suspended call let the process go on (%v): %s", err, stdout.String())
	case <-time.After(300 * time.Millisecond):
	}
	cmd.Process.Kill()
	<-exited
	if stdout.Len() > 0 {
		t.Errorf("the suspended call returned: %s", stdout.String())
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

// An activity's output that is not plain text (a NUL, a byte not UTF-8) comes as stdoutBase64: the
// script gets its bytes, as a step's.
func TestActivityOutputThatIsNotTextComesBackAsItsBytes(t *testing.T) {
	agent := startFakeAgent(t, script(
		`{"verb":"activity.wait","name":"b"}`, `{"status":"ok","stdoutBase64":"eAB5/w==","exitCode":0}`,
	))
	if out, err := ActivityCollect("b"); out != "x\x00y\xff" || err != nil {
		t.Errorf("ActivityCollect: %q, %v", out, err)
	}
	expectNoProblems(t, agent)
}
