//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package kakapotest

// lockFile does not lock where flock is missing (Windows): two test binaries making Kakapo's CA at
// the same moment on a fresh HOME may then break it.
func lockFile(path string) (func(), error) {
	return func() {}, nil
}
