//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package kakapotest

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// notPrivate says why the folder described by info is not this user's alone ("" when it is): it is
// owned by another user, or its group or others may write to it.
func notPrivate(info fs.FileInfo) string {
	stat, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return "its owner cannot be read"
	}
	if uid := os.Getuid(); int(stat.Uid) != uid {
		return fmt.Sprintf("it is owned by uid %d, not by this user (uid %d)", stat.Uid, uid)
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Sprintf("its group or others may write to it (mode %03o)", perm)
	}
	return ""
}
