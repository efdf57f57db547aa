package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	hyperspool "hyperspool.dev/go"
)

// artifactPartBytes is the size of the parts a put sends (ARTIFACT_PART_BYTES in the agent).
const artifactPartBytes = 512 * 1024

// artifactPart is what an artifact.get answers in its value: the artifact and one of its parts.
type artifactPart struct {
	Name        string `json:"name"`
	Size        int64  `json:"size"`
	Sha256      string `json:"sha256"`
	ContentType string `json:"contentType"`
	Parts       int64  `json:"parts"`
	Part        int64  `json:"part"`
	Data        string `json:"data"`
}

// sourceSize is the size of a put's file, known before any byte moves (-1 for stdin), or the
// problem with it, worded as the Node client words it.
func sourceSize(source string) (int64, string) {
	if source == "-" {
		return -1, ""
	}
	info, err := os.Stat(source)
	if err != nil {
		var errno syscall.Errno
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return 0, "cannot read " + source + ": no such file"
		case errors.As(err, &errno) && hyperspool.ErrnoName(errno) != "":
			return 0, "cannot read " + source + ": " + hyperspool.ErrnoName(errno)
		}
		return 0, "cannot read " + source
	}
	if !info.Mode().IsRegular() {
		return 0, source + " is not a file"
	}
	return info.Size(), ""
}

// artifactExchange carries on a put that answered execute (its parts, then the commit) or a get
// that answered its first part (the rest, into the destination); anything else is finished.
func artifactExchange(conn *hyperspool.Conn, call *scriptCall, answer *hyperspool.Answer) (int, error) {
	var err error
	switch {
	case answer.Status == hyperspool.StatusExecute && call.artifact.Source != nil:
		answer, err = sendArtifact(conn, answer.Position, *call.artifact.Source)
	case answer.Status == hyperspool.StatusOK && call.artifact.Dest != nil:
		answer, err = receiveArtifact(conn, call.request, answer, *call.artifact.Dest)
	case answer.Status == hyperspool.StatusOK && call.artifact.Extract != nil:
		answer, err = extractCheckout(conn, call.request, answer, *call.artifact.Extract)
	}
	var failure *transferFailure
	if errors.As(err, &failure) {
		fmt.Fprintln(os.Stderr, failure.message)
		return hyperspool.ExitFailure, nil
	}
	if err != nil {
		return 0, err
	}
	if answer == nil {
		answer = okAnswer("")
	}
	if answer.Status == hyperspool.StatusSuspended {
		awaitSuspension()
	}
	return finish(answer, false), nil
}

// transferFailure is a transfer that failed on this side (a file that cannot be read or
// written, bytes that do not match): one line, exit 1.
type transferFailure struct{ message string }

func (f *transferFailure) Error() string { return f.message }

func sendArtifact(conn *hyperspool.Conn, position int64, source string) (*hyperspool.Answer, error) {
	in := os.Stdin
	if source != "-" {
		file, err := os.Open(source)
		if err != nil {
			return nil, &transferFailure{"spool artifact put: cannot read " + source + ": " + err.Error()}
		}
		defer file.Close()
		in = file
	}
	hash := sha256.New()
	var size int64
	buffer := make([]byte, artifactPartBytes)
	for {
		n, err := io.ReadFull(in, buffer)
		if n > 0 {
			part := buffer[:n]
			write := hyperspool.NewRequest("artifact.write").With("position", position).With("data", base64.StdEncoding.EncodeToString(part))
			answer, callErr := conn.Call(write)
			if callErr != nil {
				return nil, callErr
			}
			if answer.Status != hyperspool.StatusOK {
				return answer, nil
			}
			hash.Write(part)
			size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, &transferFailure{"spool artifact put: cannot read " + source + ": " + err.Error()}
		}
	}
	commit := hyperspool.NewRequest("artifact.commit").
		With("position", position).
		With("size", size).
		With("sha256", hex.EncodeToString(hash.Sum(nil)))
	return conn.Call(commit)
}

// eachPart hands each part of a get, from its first, to sink in order, then checks the size and
// sha256 against what the artifact was stored as. A non-nil answer is the agent's refusal.
func eachPart(conn *hyperspool.Conn, request *hyperspool.Request, answer *hyperspool.Answer, sink func([]byte) error) (*hyperspool.Answer, error) {
	var first artifactPart
	if err := json.Unmarshal(answer.Value, &first); err != nil {
		return nil, &transferFailure{"spool artifact get: the agent's answer holds no artifact: " + err.Error()}
	}
	hash := sha256.New()
	var size int64
	part := first
	for {
		bytes, err := base64.StdEncoding.DecodeString(part.Data)
		if err != nil {
			return nil, &transferFailure{"spool artifact get: a part of '" + first.Name + "' is not base64"}
		}
		hash.Write(bytes)
		size += int64(len(bytes))
		if err := sink(bytes); err != nil {
			return nil, err
		}
		if part.Part+1 >= part.Parts {
			break
		}
		next, err := conn.Call(withPart(request, part.Part+1))
		if err != nil {
			return nil, err
		}
		if next.Status != hyperspool.StatusOK {
			return next, nil
		}
		part = artifactPart{}
		if err := json.Unmarshal(next.Value, &part); err != nil {
			return nil, &transferFailure{"spool artifact get: the agent's answer holds no artifact: " + err.Error()}
		}
	}
	sum := hex.EncodeToString(hash.Sum(nil))
	if size != first.Size || sum != first.Sha256 {
		return nil, &transferFailure{fmt.Sprintf("spool artifact get: '%s' arrived as %d bytes (sha256 %s), not the %d bytes (sha256 %s) it was stored as",
			first.Name, size, sum, first.Size, first.Sha256)}
	}
	return nil, nil
}

func okAnswer(stderr string) *hyperspool.Answer {
	exit := 0
	return &hyperspool.Answer{Status: hyperspool.StatusOK, ExitCode: &exit, Stderr: stderr}
}

// receiveArtifact writes the artifact part by part into dest (stdout for "-"). A file is written
// beside its name and renamed once whole and checked, so a failed get leaves no half file.
func receiveArtifact(conn *hyperspool.Conn, request *hyperspool.Request, answer *hyperspool.Answer, dest string) (*hyperspool.Answer, error) {
	out := os.Stdout
	partial := dest + ".spool-partial"
	if dest != "-" {
		file, err := os.Create(partial)
		if err != nil {
			return nil, &transferFailure{"spool artifact get: cannot write " + dest + ": " + err.Error()}
		}
		defer os.Remove(partial)
		defer file.Close()
		out = file
	}
	refused, err := eachPart(conn, request, answer, func(bytes []byte) error {
		if _, err := out.Write(bytes); err != nil {
			return &transferFailure{"spool artifact get: cannot write " + dest + ": " + err.Error()}
		}
		return nil
	})
	if refused != nil || err != nil {
		return refused, err
	}
	if dest != "-" {
		if err := out.Close(); err != nil {
			return nil, &transferFailure{"spool artifact get: cannot write " + dest + ": " + err.Error()}
		}
		if err := os.Rename(partial, dest); err != nil {
			return nil, &transferFailure{"spool artifact get: cannot write " + dest + ": " + err.Error()}
		}
	}
	return okAnswer(""), nil
}

// withPart is the get request again, asking for another part.
func withPart(request *hyperspool.Request, part int64) *hyperspool.Request {
	name, _ := request.Get("name")
	next := hyperspool.NewRequest("artifact.get").With("name", name).With("part", part)
	if run, ok := request.Get("run"); ok {
		next.With("run", run)
	}
	return next
}
