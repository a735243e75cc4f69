package kakapotest

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// unsafeRun is a run of characters a cassette's file name does not keep.
var unsafeRun = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// CassetteName is the cassette path, relative to the cassettes/ folder, of the test named testName
// (t.Name()): each part of a subtest's name is a folder, the last one the file, with ".json".
// TestGet is TestGet.json, TestGet/user_1 is TestGet/user_1.json. Each part keeps letters, digits,
// ".", "_" and "-"; every run of other characters becomes one "_", and then a short hash of the
// part follows, so two names never share a cassette: TestGet/n=1 is TestGet/n_1-<8 hex digits>.json.
// These are the rules of pytest-kakapo.
func CassetteName(testName string) string {
	parts := strings.Split(testName, "/")
	for i, part := range parts {
		parts[i] = fileSafe(part)
	}
	return strings.Join(parts, "/") + ".json"
}

// fileSafe is a file name for one part of a test's name: the part with each run of characters other
// than letters, digits, ".", "_" and "-" made one "_", without "." or "_" at its ends, and, when
// that changed it, a hash of the whole part after it. A name longer than 150 characters is cut to
// 130 with a longer hash.
func fileSafe(name string) string {
	safe := strings.Trim(unsafeRun.ReplaceAllString(name, "_"), "._")
	sum := sha256.Sum256([]byte(name))
	digest := hex.EncodeToString(sum[:])
	if len(safe) > 150 { // keeps the name well under a file system's 255 bytes, with the .json
		return safe[:130] + "_" + digest[:16]
	}
	if safe == "" {
		safe = "test"
		if name == "" {
			return safe
		}
	}
	if safe != name {
		return safe + "-" + digest[:8]
	}
	return safe
}
