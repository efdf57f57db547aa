package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	hyperspool "hyperspool.dev/go"
)

// extractCheckout is `spool checkout [DEST]`: the run's bundle (a ustar archive) unpacked into
// dest as its parts arrive, a file at a time; files already there are overwritten.
func extractCheckout(conn *hyperspool.Conn, request *hyperspool.Request, answer *hyperspool.Answer, dest string) (*hyperspool.Answer, error) {
	failure := func(err error) error {
		return &transferFailure{"spool checkout: cannot unpack into " + dest + ": " + err.Error()}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, failure(err)
	}
	reader, writer := io.Pipe()
	files := make(chan int, 1)
	unpacked := make(chan error, 1)
	go func() {
		count, err := untar(reader, dest)
		// Drain what is left so the sender never blocks on a reader that stopped.
		_, _ = io.Copy(io.Discard, reader)
		files <- count
		unpacked <- err
	}()
	refused, err := eachPart(conn, request, answer, func(bytes []byte) error {
		_, werr := writer.Write(bytes)
		return werr
	})
	writer.Close()
	count, untarErr := <-files, <-unpacked
	if refused != nil || err != nil {
		return refused, err
	}
	if untarErr != nil {
		return nil, failure(untarErr)
	}
	plural := "s"
	if count == 1 {
		plural = ""
	}
	return okAnswer(fmt.Sprintf("spool checkout: %d file%s into %s", count, plural, dest)), nil
}

// untar writes the archive's regular files under dest, refusing a path that would land outside.
func untar(in io.Reader, dest string) (int, error) {
	archive := tar.NewReader(in)
	count := 0
	for {
		header, err := archive.Next()
		if errors.Is(err, io.EOF) {
			return count, nil
		}
		if err != nil {
			return count, err
		}
		switch header.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return count, fmt.Errorf("the checkout bundle holds an entry of type '%c', which is not a file", header.Typeflag)
		}
		name := header.Name
		if filepath.IsAbs(name) || containsDotDot(name) {
			return count, fmt.Errorf("the bundle holds a path outside the checkout: %s", name)
		}
		path := filepath.Join(dest, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return count, err
		}
		_ = os.Remove(path)
		mode := os.FileMode(0o644)
		if header.Mode&0o111 != 0 {
			mode = 0o755
		}
		file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
		if err != nil {
			return count, err
		}
		_, err = io.Copy(file, archive)
		if closeErr := file.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return count, err
		}
		count++
	}
}

func containsDotDot(name string) bool {
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}
