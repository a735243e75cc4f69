package kakapotest

import (
	"crypto/x509"
	"net/http"
)

// What the tests of package kakapotest_test use of the package's insides.

// DefaultServerPID is the pid of the default server's kakapo process, or 0 when it is not running.
func DefaultServerPID() int {
	server := defaultServer()
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.run == nil || server.run.cmd.Process == nil {
		return 0
	}
	return server.run.cmd.Process.Pid
}

// AttachedServer is a server whose admin API is already at adminURL (a fake one), with its cassette
// folder dir: its sessions are opened there. It has no process: never Stop it.
func AttachedServer(adminURL, dir string) *Server {
	return &Server{run: &running{
		binary: "(a fake kakapo)",
		dir:    dir,
		url:    adminURL,
		roots:  x509.NewCertPool(),
		admin:  &http.Client{Transport: &http.Transport{}, Timeout: adminTimeout},
		exited: make(chan struct{}),
	}}
}
