// Command artifactprobe is the Go SDK's artifact calls in a real run (artifacts_engine_test.go):
// pass 1 writes 3 MiB of random bytes and puts them; a sleep ends the pass; pass 2 overwrites the
// file with zeros before the replayed put (which must send nothing), gets the artifact back and
// compares its sha256 with the one pass 1 recorded.
package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	hyperspool "hyperspool.dev/go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func sum(path string) string {
	data, _ := os.ReadFile(path)
	digest := sha256.Sum256(data)
	return hex.EncodeToString(digest[:])
}

func run() error {
	data := make([]byte, 3*1024*1024+17)
	if os.Getenv("SPOOL_PASS") == "1" {
		_, _ = rand.Read(data)
	}
	if err := os.WriteFile("data.bin", data, 0o644); err != nil {
		return err
	}
	want, err := hyperspool.StepFn("sha", func() (string, error) { return sum("data.bin"), nil })
	if err != nil {
		return err
	}
	if err := hyperspool.ArtifactPut("data.bin", "data.bin", hyperspool.ContentType("application/x-test")); err != nil {
		return err
	}
	if err := hyperspool.Sleep(time.Second); err != nil {
		return err
	}
	_ = os.Remove("data.bin")
	got, err := hyperspool.ArtifactGet("data.bin", "")
	if err != nil {
		return err
	}
	listed, err := hyperspool.ArtifactList()
	if err != nil {
		return err
	}
	for _, artifact := range listed {
		fmt.Printf("listed %s %d %s\n", artifact.Name, artifact.Size, artifact.ContentType)
	}
	if sum(got) != want {
		return fmt.Errorf("sha256 differs on pass %s", os.Getenv("SPOOL_PASS"))
	}
	fmt.Printf("sha256 matches on pass %s\n", os.Getenv("SPOOL_PASS"))
	if _, err := hyperspool.ArtifactGet("missing", "x"); err != nil {
		fmt.Printf("missing: %v\n", err)
	}
	return nil
}
