package hyperspool_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestArtifactsInARealRun runs internal/artifactprobe under `spool run` (the repository's engine,
// on its embedded store): put, a sleep (a new pass), get the same bytes, list, a missing name.
// Needs node and the built dist/ (npm ci builds it), as the other SDKs' engine tests do.
func TestArtifactsInARealRun(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, "dist", "cli", "main.js")); err != nil {
		t.Fatalf("the engine is not built (run npm ci or npm run build in %s): %v", repo, err)
	}
	dir := t.TempDir()
	probe := filepath.Join(dir, "artifactprobe")
	build := exec.Command("go", "build", "-o", probe, "./internal/artifactprobe")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.sh"), []byte(probe+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(repo, "bin", "spool"), "run", "probe.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SPOOL_SOCKET=", "SPOOL_DATABASE_URL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spool run: %v\n%s", err, out)
	}
	output := string(out)
	for _, want := range []string{
		"listed data.bin 3145745 application/x-test",
		"sha256 matches on pass 2",
		"missing: ",
	} {
		if !strings.Contains(output, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, output)
		}
	}
	if strings.Contains(output, "sha256 matches on pass 1") {
		t.Errorf("the sleep did not end pass 1:\n%s", output)
	}
}
