// Command preview is the preview environment of the seed's "A complete workflow": it deploys,
// waits for the pull request to close (holding no process), then tears down what the deploy
// recorded.
//
// A Go workflow is a binary; submit a .sh that execs it:
//
//	go build -o /tmp/preview ./examples/preview
//	printf 'exec /tmp/preview\n' > preview.sh
//	spool submit preview.sh --input '{"host":"pr-7"}'
//	spool event emit pr.closed --payload '{"pr":7}'
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	hyperspool "hyperspool.dev/go"
)

// PreviewEnv is what a deploy leaves behind. DeployedAt differs on every real deploy, so a
// replay that ran the deploy again instead of reading the journal would show. It is in
// milliseconds: the journal keeps numbers as doubles, exact only up to 2^53.
type PreviewEnv struct {
	Host       string `json:"host"`
	URL        string `json:"url"`
	DeployedAt int64  `json:"deployed_at"`
}

func deploy(host string) (PreviewEnv, error) {
	fmt.Fprintf(os.Stderr, "deploying %s\n", host)
	return PreviewEnv{Host: host, URL: "https://" + host + ".preview", DeployedAt: time.Now().UnixMilli()}, nil
}

func teardown(env PreviewEnv) (string, error) {
	fmt.Fprintf(os.Stderr, "tearing down %s\n", env.URL)
	return fmt.Sprintf("torn down %s deployed at %d", env.URL, env.DeployedAt), nil
}

// inputHost reads the host from the run's input ({"host": ...}). The code around StepFn runs on
// every pass, so it stays cheap and gives the same answer each time.
func inputHost() string {
	var doc struct {
		Input struct {
			Host string `json:"host"`
		} `json:"input"`
	}
	if text, err := os.ReadFile(os.Getenv("SPOOL_INPUT_FILE")); err == nil && json.Unmarshal(text, &doc) == nil && doc.Input.Host != "" {
		return doc.Input.Host
	}
	return "pr-7"
}

func preview() error {
	host := inputHost()
	env, err := hyperspool.StepFn("deploy", func() (PreviewEnv, error) {
		return deploy(host)
	})
	if err != nil {
		return err
	}
	closed, err := hyperspool.WaitEvent("pr.closed")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pr.closed: %s\n", closed)
	done, err := hyperspool.StepFn("teardown", func() (string, error) {
		return teardown(env)
	})
	if err != nil {
		return err
	}
	fmt.Println(done)
	return nil
}

func main() {
	if err := preview(); err != nil {
		fmt.Fprintln(os.Stderr, "preview:", err)
		os.Exit(hyperspool.ExitCode(err))
	}
}
