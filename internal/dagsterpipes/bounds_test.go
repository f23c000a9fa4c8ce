package dagsterpipes

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/adler32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// mkfifo makes a named pipe in a temporary folder.
func mkfifo(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// allocated returns the bytes f allocates in the process.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestOpenRefusesAContextPathThatIsNoRegularFile: /dev/zero, a named pipe
// no one writes to, or a folder as the context path is refused at once
// and says what it is; nothing is read from it, so it neither grows
// memory until the process is killed nor blocks for good.
func TestOpenRefusesAContextPathThatIsNoRegularFile(t *testing.T) {
	cases := map[string]string{
		"dev zero":    "the context path /dev/zero is a character device, not a regular file",
		"a fifo":      "is a named pipe (FIFO), not a regular file",
		"a directory": "is a directory, not a regular file",
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			path := "/dev/zero"
			switch name {
			case "a fifo":
				path = mkfifo(t, "context.fifo")
			case "a directory":
				path = t.TempDir()
			}
			var stdout bytes.Buffer
			s, err := Open(env(t, map[string]any{"path": path}, map[string]any{"stdio": "stdout"}), &stdout, &stdout)
			if err == nil || s != nil {
				t.Fatalf("Open = %v, %v; want an error", s, err)
			}
			if !strings.Contains(err.Error(), ContextEnv) || !strings.Contains(err.Error(), want) {
				t.Errorf("%v; want it to name %s and say %q", err, ContextEnv, want)
			}
			if stdout.Len() != 0 {
				t.Errorf("a message was written: %q", stdout.String())
			}
		})
	}
}

// TestOpenRefusesAContextFileOverTheLimit: a context file of 1 GiB (a
// sparse one) is refused by its size, before a byte of it is read.
func TestOpenRefusesAContextFileOverTheLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "context.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	getenv := env(t, map[string]any{"path": path}, map[string]any{"stdio": "stdout"})
	var openErr error
	n := allocated(func() { _, openErr = Open(getenv, &bytes.Buffer{}, &bytes.Buffer{}) })
	if openErr == nil || !strings.Contains(openErr.Error(), "is 1.0 GiB; a Pipes context may have at most 4.0 MiB") {
		t.Errorf("Open: %v; want the size refused", openErr)
	}
	if n > 1<<20 {
		t.Errorf("Open allocated %d KiB to refuse it; want at most 1 MiB", n>>10)
	}
}

// zlibBomb returns a bootstrap parameter that decodes to valid JSON of
// prefix, then mib MiB of the letter a, then suffix: 1 GiB compresses to
// about a megabyte. The stream is built from one compressed block of 1 MiB
// of a's, repeated: after a sync flush a block starts on a byte, and its
// back-references reach only a's, which every copy finds before it.
func zlibBomb(t *testing.T, prefix, suffix string, mib int) string {
	t.Helper()
	const chunk = 1 << 20
	a := bytes.Repeat([]byte("a"), chunk)
	var buf bytes.Buffer
	buf.Write([]byte{0x78, 0xda}) // zlib header: deflate, 32 KiB window, best compression
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) {
		if _, err := fw.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := fw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	write([]byte(prefix))
	write(a)
	mark := buf.Len()
	write(a)
	block := bytes.Clone(buf.Bytes()[mark:])
	chunks := mib
	for range chunks - 2 {
		buf.Write(block)
	}
	if _, err := fw.Write([]byte(suffix)); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := adler32.Checksum([]byte(prefix))
	aSum := adler32.Checksum(a)
	for range chunks {
		sum = adler32Combine(sum, aSum, chunk)
	}
	sum = adler32Combine(sum, adler32.Checksum([]byte(suffix)), int64(len(suffix)))
	buf.Write(binary.BigEndian.AppendUint32(nil, sum))
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// adler32Combine is the Adler-32 of two byte strings one after the
// other, from their checksums and the second's length (zlib's
// adler32_combine).
func adler32Combine(sum1, sum2 uint32, len2 int64) uint32 {
	const base = 65521
	rem := uint32(len2 % base)
	a := sum1 & 0xffff
	b := (rem * a) % base
	a += (sum2 & 0xffff) + base - 1
	b += (sum1 >> 16) + (sum2 >> 16) + base - rem
	for a >= base {
		a -= base
	}
	for b >= base {
		b -= base
	}
	return a | b<<16
}

// TestOpenRefusesAZlibBomb: a context parameter that is valid JSON but
// 1 GiB when decoded is refused once it passes the limit, with a few
// times the limit allocated at most (the race detector's build allocates
// about twice what a plain one does).
func TestOpenRefusesAZlibBomb(t *testing.T) {
	bomb := zlibBomb(t, `{"data": {"asset_keys": ["books"], "run_id": "r1", "extras": {"x": "`, `"}}}`, 1024)
	messages, err := EncodeParam(map[string]any{"stdio": "stdout"})
	if err != nil {
		t.Fatal(err)
	}
	var openErr error
	n := allocated(func() {
		_, openErr = Open(func(k string) string {
			if k == ContextEnv {
				return bomb
			}
			return messages
		}, &bytes.Buffer{}, &bytes.Buffer{})
	})
	if openErr == nil || !strings.Contains(openErr.Error(), ContextEnv+": it decodes to more than 4.0 MiB; a Pipes parameter may have at most that") {
		t.Errorf("Open: %v; want the bomb refused", openErr)
	}
	if n > 32<<20 {
		t.Errorf("Open allocated %d MiB to refuse it; want at most 32 MiB", n>>20)
	}
}

// TestZlibBombIsValid: the bomb of the test above decodes, whole and
// with its checksum, to the JSON it says (checked on a smaller one: the
// construction is the same at any size).
func TestZlibBombIsValid(t *testing.T) {
	const mib = 16
	raw, err := base64.StdEncoding.DecodeString(zlibBomb(t, `{"x": "`, `"}`, mib))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := io.Copy(&got, zr); err != nil {
		t.Fatal(err)
	}
	want := `{"x": "` + strings.Repeat("a", mib<<20) + `"}`
	if got.String() != want {
		t.Fatalf("decoded %d bytes, want %d", got.Len(), len(want))
	}
	if !json.Valid(got.Bytes()) {
		t.Fatal("not JSON")
	}
}

// TestOpenRefusesAMessagesPathThatIsNoRegularFile: messages go to a
// regular file only (Dagster's file message reader tails one): a named
// pipe — with or without a reader — or a device is refused at once, never
// waited on, and nothing is written to it.
func TestOpenRefusesAMessagesPathThatIsNoRegularFile(t *testing.T) {
	ctx := map[string]any{"data": map[string]any{"asset_keys": []string{"a"}}}
	fifo := mkfifo(t, "messages.fifo")
	cases := map[string]string{
		fifo:        "is a named pipe (FIFO), not a regular file",
		"/dev/null": "the messages path /dev/null is a character device, not a regular file",
		t.TempDir(): "is a directory, not a regular file",
	}
	for path, want := range cases {
		s, err := Open(env(t, ctx, map[string]any{"path": path}), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || s != nil {
			t.Errorf("%s: Open = %v, %v; want an error", path, s, err)
			continue
		}
		if !strings.Contains(err.Error(), MessagesEnv) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `{"stdio": "stderr"}`) {
			t.Errorf("%s: %v; want it to name %s, say %q and the way to a stream", path, err, MessagesEnv, want)
		}
	}
}

// TestOpenAppendsToARegularMessagesFile: the messages file may exist (it
// is appended to) or not (it is made), also behind a symbolic link.
func TestOpenAppendsToARegularMessagesFile(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "messages.jsonl")
	if err := os.WriteFile(existing, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(existing, link); err != nil {
		t.Fatal(err)
	}
	ctx := map[string]any{"data": map[string]any{"asset_keys": []string{"a"}}}
	for _, path := range []string{existing, link, filepath.Join(dir, "new.jsonl")} {
		s, err := Open(env(t, ctx, map[string]any{"path": path}), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(existing)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "\n"); got != 5 || !strings.HasPrefix(string(b), "{}\n") {
		t.Fatalf("messages file:\n%s", b)
	}
}
