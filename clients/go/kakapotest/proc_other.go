//go:build !linux

package kakapotest

import "os/exec"

// setProcessAttributes leaves kakapo in the test binary's process group: without Linux's Pdeathsig,
// a Ctrl-C that ends the test binary reaches kakapo too (it saves and exits). A test binary that
// ends otherwise without Main or Stop leaves it running until its session timeout... and beyond:
// call kakapotest.Main from TestMain.
func setProcessAttributes(cmd *exec.Cmd) {}
