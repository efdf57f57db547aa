package main

import (
	"os"
	"path/filepath"
	"time"

	"hyperspool.dev/go/internal/nodecompat"
)

// tailInterval is how often the output file is read back (src/common/file-tail.ts).
const tailInterval = 150 * time.Millisecond

// A fileTail is a file a process writes its output into, read back as it grows: each new piece
// of text goes to onText, in order, one call at a time.
type fileTail struct {
	path   string
	file   *os.File // given to the script as both stdout and stderr: one file keeps their order
	reader *os.File
	onText func(string)
	stop   chan struct{}
	done   chan struct{}
}

func tailFile(path string, onText func(string)) (*fileTail, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	reader, err := os.Open(path)
	if err != nil {
		file.Close()
		return nil, err
	}
	t := &fileTail{path: path, file: file, reader: reader, onText: onText, stop: make(chan struct{}), done: make(chan struct{})}
	go t.loop()
	return t, nil
}

func (t *fileTail) loop() {
	defer close(t.done)
	var decoder nodecompat.Decoder
	buffer := make([]byte, 64*1024)
	copyNew := func() {
		var text []byte
		for {
			n, err := t.reader.Read(buffer)
			text = append(text, buffer[:n]...)
			if n == 0 || err != nil {
				break
			}
		}
		if s := decoder.Write(text); s != "" {
			t.onText(s)
		}
	}
	ticker := time.NewTicker(tailInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			copyNew()
		case <-t.stop:
			copyNew()
			if rest := decoder.End(); rest != "" {
				t.onText(rest)
			}
			return
		}
	}
}

// close copies what is left, then closes and removes the file: all its text went to onText.
func (t *fileTail) close() {
	close(t.stop)
	<-t.done
	t.file.Close()
	t.reader.Close()
	os.Remove(t.path)
}
