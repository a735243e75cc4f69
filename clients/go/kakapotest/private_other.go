//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package kakapotest

import "io/fs"

// notPrivate checks nothing where modes and owners are not Unix's (Windows): the folder is in the
// user's own cache folder, or one this process made.
func notPrivate(info fs.FileInfo) string { return "" }
