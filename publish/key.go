package publish

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CheckKey reports whether key names an object under a root: one or more
// slash-separated segments, none empty, "." or ".." (so no leading,
// trailing or doubled slash), in valid UTF-8 without control characters.
// The error wraps ErrBadKey.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("key %q: empty: %w", key, ErrBadKey)
	}
	if err := checkText(key); err != nil {
		return fmt.Errorf("key %q: %w", key, err)
	}
	if err := checkSegments(key); err != nil {
		return fmt.Errorf("key %q: %w", key, err)
	}
	return nil
}

// CheckPrefix reports whether prefix is a prefix of keys under a root:
// "" (the whole root), or a string whose part up to its last slash is a
// folder as CheckKey would admit it, followed by the start of a segment
// ("dt=2024-05-01/", "dt=", "dt=2024-05-01/run=R/part-"). The error wraps
// ErrBadKey.
func CheckPrefix(prefix string) error {
	if err := checkText(prefix); err != nil {
		return fmt.Errorf("prefix %q: %w", prefix, err)
	}
	dir, last := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir, last = prefix[:i], prefix[i+1:]
		if err := checkSegments(dir); err != nil {
			return fmt.Errorf("prefix %q: %w", prefix, err)
		}
	}
	// A last segment of "." or ".." is a folder named so, not the start
	// of a name: it might be read as one.
	if last == "." || last == ".." {
		return fmt.Errorf("prefix %q: a %q segment: %w", prefix, last, ErrBadKey)
	}
	return nil
}

// CheckFolder reports whether folder and parts suit CompleteFolder: folder
// is a prefix (see CheckPrefix) ending in "/", there is at least one part,
// and every part has a key under folder, each key once. The error wraps
// ErrBadKey.
func CheckFolder(folder string, parts []Part) error {
	if folder == "" || !strings.HasSuffix(folder, "/") {
		return fmt.Errorf("folder %q: want a prefix ending in /: %w", folder, ErrBadKey)
	}
	if err := CheckPrefix(folder); err != nil {
		return err
	}
	if len(parts) == 0 {
		return fmt.Errorf("folder %q: no parts to complete", folder)
	}
	seen := make(map[string]bool, len(parts))
	for _, p := range parts {
		if err := CheckKey(p.Key); err != nil {
			return err
		}
		if !strings.HasPrefix(p.Key, folder) {
			return fmt.Errorf("folder %q: part %q is not under it: %w", folder, p.Key, ErrBadKey)
		}
		if seen[p.Key] {
			return fmt.Errorf("folder %q: part %q given twice", folder, p.Key)
		}
		seen[p.Key] = true
	}
	return nil
}

// checkText rejects what is not plain UTF-8 text.
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("not valid UTF-8: %w", ErrBadKey)
	}
	for _, r := range s {
		if r < 32 || r == 127 {
			return fmt.Errorf("a control character: %w", ErrBadKey)
		}
	}
	return nil
}

// checkSegments rejects a path with an empty, "." or ".." segment.
func checkSegments(path string) error {
	for seg := range strings.SplitSeq(path, "/") {
		switch seg {
		case "":
			return fmt.Errorf("an empty segment (a leading, trailing or doubled /): %w", ErrBadKey)
		case ".", "..":
			return fmt.Errorf("a %q segment: %w", seg, ErrBadKey)
		}
	}
	return nil
}
