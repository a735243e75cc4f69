package kakapotest_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// processStart is when process pid started, from /proc (its 22nd field, in clock ticks since the
// system started), or "?" where that cannot be read: with the pid, it names one process even if the
// system gives the pid to another one later.
func processStart(pid int) string {
	if _, fields := procStat(pid); len(fields) > 19 {
		return fields[19]
	}
	return "?"
}

// procStat is the state of process pid and the fields of /proc/PID/stat after it ("" when that cannot
// be read).
func procStat(pid int) (string, []string) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", nil
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, the last ")" ends it.
	end := strings.LastIndexByte(string(raw), ')')
	if end < 0 {
		return "", nil
	}
	fields := strings.Fields(string(raw[end+1:]))
	if len(fields) == 0 {
		return "", nil
	}
	return fields[0], fields
}

// processEnded says whether process pid (which started at start, see processStart) has ended: no
// process has the pid any more (kill(pid, 0) answers ESRCH), or it is a zombie (it has ended, and the
// process that adopted it has not reaped it yet), or the pid is another process's.
func processEnded(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	state, _ := procStat(pid)
	if state == "Z" || state == "X" {
		return true
	}
	return start != "?" && state != "" && processStart(pid) != start
}
