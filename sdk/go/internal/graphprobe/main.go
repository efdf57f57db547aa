// Command graphprobe is the Go SDK's CallNode and CallGraph in a real run (graphs_engine_test.go),
// run with --fresh-dir so each pass starts in a new, empty directory: a step writes the graph file
// (so pass 2 has none and its replayed CallGraph must not need it), an http node charges the
// test's counting server with node.idempotency_key, a 404 node fails, a config the kind does not
// take is refused, the graph's child run ends pass 1 and a sleep pass 2. Each pass prints what it
// got back.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	hyperspool "hyperspool.dev/go"
)

const tinyGraph = `{"nodes": [{"id": "one", "type": "script", "config": {"interpreter": "bash", "body": "true"}}], "outputs": {"y": {"$expr": "input.x"}}}` + "\n"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(hyperspool.ExitCode(err))
	}
}

func run() error {
	pass, url := os.Getenv("SPOOL_PASS"), os.Getenv("COUNTER_URL")
	if _, err := hyperspool.StepFn("write-graph", func() (bool, error) {
		return true, os.WriteFile("tiny.json", []byte(tinyGraph), 0o644)
	}); err != nil {
		return err
	}
	charge, err := hyperspool.CallNode("http", map[string]any{
		"method":  "POST",
		"url":     url,
		"headers": map[string]any{"Idempotency-Key": map[string]any{"$expr": "node.idempotency_key"}},
	}, hyperspool.NodeName("charge"))
	if err != nil {
		return err
	}
	var response struct {
		Status int `json:"status"`
		Body   struct {
			Key string `json:"key"`
		} `json:"body"`
	}
	if err := json.Unmarshal(charge, &response); err != nil {
		return fmt.Errorf("charge output %s: %w", charge, err)
	}
	fmt.Printf("pass %s: charge %d key %s\n", pass, response.Status, response.Body.Key)

	_, err = hyperspool.CallNode("http", map[string]any{"url": url + "/missing"}, hyperspool.NodeName("missing"))
	var failed *hyperspool.StepFailed
	if !errors.As(err, &failed) {
		return fmt.Errorf("the 404 node gave %v, not a StepFailed", err)
	}
	fmt.Printf("pass %s: failed %s exit %d: %s\n", pass, failed.Name, failed.ExitCode, failed.Detail)

	_, err = hyperspool.CallNode("http", map[string]any{"url": url, "nope": 1})
	var refused *hyperspool.ScriptError
	if !errors.As(err, &refused) {
		return fmt.Errorf("the bad config gave %v, not a ScriptError", err)
	}
	fmt.Printf("pass %s: refused %s exit %d: %s\n", pass, refused.Kind, refused.ExitCode, refused.Message)

	// A pipeline is not a graph: refused, as spool call-graph refuses it, taking no position.
	if err := os.WriteFile("pipe.yaml", []byte("jobs:\n  a:\n    steps:\n      - run: true\n"), 0o644); err != nil {
		return err
	}
	if _, err := hyperspool.CallGraph("pipe.yaml", nil); errors.As(err, &refused) {
		fmt.Printf("pass %s: not a graph: %s exit %d: %s\n", pass, refused.Kind, refused.ExitCode, refused.Message)
	} else {
		return fmt.Errorf("a pipeline called as a graph gave %v, not a ScriptError", err)
	}

	_, statErr := os.Stat("tiny.json")
	outputs, err := hyperspool.CallGraph("tiny.json", map[string]any{"x": "5"})
	if err != nil {
		return err
	}
	fmt.Printf("pass %s: graph y=%s (file there: %t)\n", pass, outputs["y"], statErr == nil)
	return hyperspool.Sleep(time.Millisecond)
}
