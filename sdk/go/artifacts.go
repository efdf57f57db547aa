package hyperspool

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// artifactPartBytes is how much of a file one request carries: the agent takes parts of at most
// 1 MiB, and the other clients send 512 KiB, so neither side holds a whole artifact.
const artifactPartBytes = 512 * 1024

// An ArtifactOption sets something about an artifact call besides its name.
type ArtifactOption func(*artifactOptions)

type artifactOptions struct {
	contentType string
	run         string
}

// ContentType records the artifact's content type (default application/octet-stream).
func ContentType(contentType string) ArtifactOption {
	return func(o *artifactOptions) { o.contentType = contentType }
}

// OfRun reads another run's artifact (one the caller may read: the same project).
func OfRun(runID string) ArtifactOption {
	return func(o *artifactOptions) { o.run = runID }
}

// Artifact is what ArtifactList tells of one artifact.
type Artifact struct {
	Name        string `json:"name"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	ContentType string `json:"contentType"`
	CreatedAt   string `json:"createdAt"`
}

// ArtifactPut stores the file at path as this run's artifact name (docs/artifacts.md). It is
// recorded: on a replay the agent answers from the journal and the file is neither read nor sent.
func ArtifactPut(name, path string, opts ...ArtifactOption) error {
	var o artifactOptions
	for _, opt := range opts {
		opt(&o)
	}
	req := NewRequest("artifact.put").With("name", name)
	if o.contentType != "" {
		req.With("contentType", o.contentType)
	}
	// Looked at, not opened, before the agent is asked: a replayed put needs no file (a new pod has
	// none of the last pass's), and a new one whose file cannot be read the agent refuses.
	switch info, err := os.Stat(path); {
	case err != nil:
		req.With("unreadable", fmt.Sprintf("artifact put %s: %v", name, err))
	case !info.Mode().IsRegular():
		req.With("unreadable", fmt.Sprintf("artifact put %s: %s is not a file", name, path))
	default:
		req.With("size", info.Size())
	}
	answer, err := process.call(req)
	if err != nil {
		return err
	}
	if answer.Status != StatusExecute {
		return expectSuccess(answer, "artifact put")
	}
	file, err := os.Open(path)
	if err != nil {
		return usageError(fmt.Sprintf("artifact put %s: %v", name, err))
	}
	defer file.Close()
	position := answer.Position
	digest := sha256.New()
	buffer := make([]byte, artifactPartBytes)
	var sent int64
	for {
		n, readErr := io.ReadFull(file, buffer)
		if n > 0 {
			part := buffer[:n]
			written, err := process.call(NewRequest("artifact.write").With("position", position).With("data", base64.StdEncoding.EncodeToString(part)))
			if err != nil {
				return err
			}
			if err := expectSuccess(written, "artifact put"); err != nil {
				return err
			}
			digest.Write(part)
			sent += int64(n)
		}
		if readErr == io.EOF || readErr == io.ErrUnexpectedEOF {
			break
		}
		if readErr != nil {
			return usageError(fmt.Sprintf("artifact put %s: %v", name, readErr))
		}
	}
	committed, err := process.call(NewRequest("artifact.commit").With("position", position).With("size", sent).With("sha256", hex.EncodeToString(digest.Sum(nil))))
	if err != nil {
		return err
	}
	return expectSuccess(committed, "artifact put")
}

type artifactPart struct {
	Data   string `json:"data"`
	Parts  int    `json:"parts"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ArtifactGet writes the artifact name (of this run, or of OfRun's) to dest, or when dest is ""
// to the last part of the name in the working directory, and returns the path. The file appears
// only once whole, its size and sha256 checked.
func ArtifactGet(name, dest string, opts ...ArtifactOption) (string, error) {
	var o artifactOptions
	for _, opt := range opts {
		opt(&o)
	}
	target := dest
	if target == "" {
		for _, segment := range strings.Split(name, "/") {
			if segment != "" && segment != "." && segment != ".." {
				target = segment
			}
		}
		if target == "" {
			return "", usageError(fmt.Sprintf("artifact get: '%s' names no file to write to; give a dest", name))
		}
	}
	partial := target + ".spool-partial"
	out, err := os.Create(partial)
	if err != nil {
		return "", usageError(fmt.Sprintf("artifact get %s: %v", name, err))
	}
	defer os.Remove(partial)
	defer out.Close()
	digest := sha256.New()
	var size int64
	var last artifactPart
	for part := 0; part == 0 || part < last.Parts; part++ {
		req := NewRequest("artifact.get").With("name", name).With("part", part)
		if o.run != "" {
			req.With("run", o.run)
		}
		answer, err := process.call(req)
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(answer.Value, &last); err != nil {
			return "", internalError(fmt.Sprintf("artifact get %s: the agent's answer is not a part: %v", name, err))
		}
		data, err := base64.StdEncoding.DecodeString(last.Data)
		if err != nil {
			return "", internalError(fmt.Sprintf("artifact get %s: part %d is not base64: %v", name, part, err))
		}
		if _, err := out.Write(data); err != nil {
			return "", usageError(fmt.Sprintf("artifact get %s: %v", name, err))
		}
		digest.Write(data)
		size += int64(len(data))
		if last.Parts == 0 {
			break
		}
	}
	if size != last.Size || hex.EncodeToString(digest.Sum(nil)) != last.SHA256 {
		return "", internalError(fmt.Sprintf("artifact get %s: arrived as %d bytes, not the %d bytes it was stored as", name, size, last.Size))
	}
	if err := out.Close(); err != nil {
		return "", usageError(fmt.Sprintf("artifact get %s: %v", name, err))
	}
	if err := os.Rename(partial, target); err != nil {
		return "", usageError(fmt.Sprintf("artifact get %s: %v", name, err))
	}
	return target, nil
}

// ArtifactList lists this run's artifacts (or OfRun's), in the order they were put.
func ArtifactList(opts ...ArtifactOption) ([]Artifact, error) {
	var o artifactOptions
	for _, opt := range opts {
		opt(&o)
	}
	req := NewRequest("artifact.list")
	if o.run != "" {
		req.With("run", o.run)
	}
	req.With("json", true)
	answer, err := process.call(req)
	if err != nil {
		return nil, err
	}
	var listed []Artifact
	if err := json.Unmarshal([]byte(answer.Stdout), &listed); err != nil {
		return nil, internalError(fmt.Sprintf("artifact list: the agent's answer is not a list: %v", err))
	}
	return listed, nil
}
