package kakapotest

import (
	"os/exec"
	"syscall"
)

// setProcessAttributes: kakapo gets SIGTERM (it saves and exits) when the test binary ends without
// stopping it, and runs in a process group of its own, so a Ctrl-C reaches the test binary only.
func setProcessAttributes(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}
