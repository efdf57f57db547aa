package hyperspool_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCallNodeAndCallGraphInARealRun runs internal/graphprobe under `spool run --fresh-dir` (the
// repository's engine, on its embedded store), each pass in a new, empty directory, against a
// local server that counts the charges per Idempotency-Key and answers the key it got. Pass 1 ends
// at the graph's child run, pass 2 (the child ended) at the sleep, pass 3 replays everything. The
// charge is sent once, and passes 2 and 3 print the output pass 1 recorded (the same key); a 404
// node is a StepFailed on every pass; a config the kind does not take, and a pipeline called as a
// graph, are usage ScriptErrors; the graph's outputs come back on passes 2 and 3, whose
// directories have no graph file (a step wrote it in pass 1's). Needs node and the built dist/.
func TestCallNodeAndCallGraphInARealRun(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, "dist", "cli", "main.js")); err != nil {
		t.Fatalf("the engine is not built (run npm ci or npm run build in %s): %v", repo, err)
	}
	var mu sync.Mutex
	var keys []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		keys = append(keys, key)
		mu.Unlock()
		w.Header().Set("content-type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"key": key})
	}))
	defer server.Close()

	dir := t.TempDir()
	probe := filepath.Join(dir, "graphprobe")
	if out, err := exec.Command("go", "build", "-o", probe, "./internal/graphprobe").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.sh"), []byte(probe+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(repo, "bin", "spool"), "run", "probe.sh", "--fresh-dir")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SPOOL_SOCKET=", "SPOOL_DATABASE_URL=", "COUNTER_URL="+server.URL)
	out, err := cmd.CombinedOutput()
	output := string(out)
	if err != nil {
		t.Fatalf("spool run: %v\n%s", err, output)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "spool-") {
		t.Fatalf("the charge should be sent once, with the node's key; the server got %q\n%s", keys, output)
	}
	for _, want := range []string{
		"pass 1: charge 200 key " + keys[0],
		"pass 2: charge 200 key " + keys[0],
		"pass 2: failed missing exit 1: spool call-node: ",
		"pass 2: refused usage exit 2: spool call-node: unknown key 'nope'",
		"pass 2: not a graph: usage exit 2: call_graph: pipe.yaml is not a graph",
		"pass 2: graph y=5 (file there: false)",
		"pass 3: charge 200 key " + keys[0],
		"pass 3: graph y=5 (file there: false)",
	} {
		if !strings.Contains(output, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, output)
		}
	}
}
