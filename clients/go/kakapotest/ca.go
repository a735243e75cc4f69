package kakapotest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// systemBundles are the usual places of the system's CA certificates as one PEM file (those Go's
// crypto/x509 reads on Linux and the BSDs, and macOS's).
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Gentoo, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine, macOS, the BSDs
}

// kakapoCA is the path of Kakapo's CA certificate, from `kakapo ca path` (which makes the CA on its
// first use). Two test binaries doing that at once on a fresh HOME could see each other's half-made
// CA: one at a time, through a lock file.
func kakapoCA(binary, caDir string) (string, error) {
	unlock, err := lockFile(filepath.Join(os.TempDir(), "kakapotest-ca-"+strconv.Itoa(os.Getuid())+".lock"))
	if err != nil {
		return "", fmt.Errorf("the lock around %s ca path: %v", binary, err)
	}
	defer unlock()
	arguments := []string{"ca", "path"}
	if caDir != "" {
		arguments = append(arguments, "--ca-dir", caDir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, arguments...)
	cmd.Env = serverEnvironment()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s failed (%v): %s", binary, strings.Join(arguments, " "), err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	path := strings.TrimSpace(lines[len(lines)-1])
	if path == "" {
		return "", fmt.Errorf("%s %s printed no path", binary, strings.Join(arguments, " "))
	}
	return path, nil
}

// caBundle writes a PEM file of the system's CA certificates and Kakapo's (the one every client of
// a session trusts) and returns its path, with the same certificates as a pool for Session.Client.
// The file is named after its content, in a folder of the temporary directory, so every run with
// the same CAs shares it and nothing is left to clean up.
func caBundle(caFile string) (string, *x509.CertPool, error) {
	kakapo, err := os.ReadFile(caFile)
	if err != nil {
		return "", nil, fmt.Errorf("Kakapo's CA: %v", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(kakapo) {
		return "", nil, fmt.Errorf("Kakapo's CA %s holds no PEM certificate", caFile)
	}
	var parts [][]byte
	candidates := append([]string{os.Getenv("SSL_CERT_FILE")}, systemBundles...)
	for _, candidate := range candidates {
		if candidate == "" {
			continue
		}
		if system, err := os.ReadFile(candidate); err == nil && len(bytes.TrimSpace(system)) > 0 {
			parts = append(parts, bytes.TrimRight(system, "\n"))
			break
		}
	}
	parts = append(parts, bytes.TrimRight(kakapo, "\n"))
	content := append(bytes.Join(parts, []byte("\n")), '\n')
	sum := sha256.Sum256(content)
	folder := filepath.Join(os.TempDir(), "kakapotest-"+strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return "", nil, fmt.Errorf("the CA bundle's folder: %v", err)
	}
	bundle := filepath.Join(folder, "ca-bundle-"+hex.EncodeToString(sum[:8])+".pem")
	if existing, err := os.ReadFile(bundle); err == nil && bytes.Equal(existing, content) {
		return bundle, roots, nil
	}
	// Written aside and renamed: a test binary running beside this one never reads half a file.
	temporary, err := os.CreateTemp(folder, "ca-bundle-*.tmp")
	if err != nil {
		return "", nil, fmt.Errorf("the CA bundle: %v", err)
	}
	_, err = temporary.Write(content)
	if closeErr := temporary.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Chmod(temporary.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(temporary.Name(), bundle)
	}
	if err != nil {
		os.Remove(temporary.Name())
		return "", nil, fmt.Errorf("the CA bundle %s: %v", bundle, err)
	}
	return bundle, roots, nil
}
