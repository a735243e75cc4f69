package kakapotest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// processFolder is the private folder of this process, made when the user has no cache folder.
var processFolder struct {
	sync.Mutex
	path string
}

// privateFolder is the folder of the CA bundle (what SSL_CERT_FILE points at) and of the lock around
// `kakapo ca path`: kakapotest in the user's cache folder (os.UserCacheDir), made with mode 700. When
// the user has no cache folder, or it cannot be made, it is a folder of this process's own in the
// temporary directory. A folder another user could change is refused: one that is a symbolic link,
// not a folder, owned by another user, or writable by its group or others.
func privateFolder() (string, error) {
	if cache, err := os.UserCacheDir(); err == nil && filepath.IsAbs(cache) {
		folder := filepath.Join(cache, "kakapotest")
		err := os.MkdirAll(cache, 0o700)
		if err == nil {
			if err = os.Mkdir(folder, 0o700); errors.Is(err, fs.ErrExist) {
				err = nil // checked below, whatever is there
			}
		}
		if err == nil {
			return folder, checkPrivate(folder)
		}
		// A cache folder that cannot be made (a read-only or missing HOME): the process's own folder.
	}
	processFolder.Lock()
	defer processFolder.Unlock()
	if processFolder.path == "" {
		folder, err := os.MkdirTemp("", "kakapotest-") // mode 700, a name no one else has
		if err != nil {
			return "", fmt.Errorf("a folder for the CA bundle: %v", err)
		}
		processFolder.path = folder
	}
	return processFolder.path, checkPrivate(processFolder.path)
}

// removeProcessFolder removes the process's own folder (see privateFolder), when it made one.
func removeProcessFolder() {
	processFolder.Lock()
	defer processFolder.Unlock()
	if processFolder.path != "" {
		os.RemoveAll(processFolder.path)
		processFolder.path = ""
	}
}

// checkPrivate says why folder cannot hold the CA bundle, if it cannot: it must be a folder (not a
// symbolic link to one) that only this user can change.
func checkPrivate(folder string) error {
	refuse := func(why string) error {
		return fmt.Errorf("kakapotest keeps its CA bundle and lock in %s, and refuses it: %s. "+
			"Remove it (kakapotest makes it again, with mode 700), or chmod 700 it if it is yours", folder, why)
	}
	info, err := os.Lstat(folder)
	if err != nil {
		return fmt.Errorf("the folder of kakapotest's CA bundle and lock: %v", err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return refuse("it is a symbolic link, not a folder")
	}
	if !info.IsDir() {
		return refuse("it is not a folder")
	}
	if why := notPrivate(info); why != "" {
		return refuse(why)
	}
	return nil
}

// kakapoCA is the path of Kakapo's CA certificate, from `kakapo ca path` (which makes the CA on its
// first use). Two test binaries doing that at once on a fresh HOME could see each other's half-made
// CA: one at a time, through a lock file.
func kakapoCA(binary, caDir, folder string) (string, error) {
	unlock, err := lockFile(filepath.Join(folder, "ca.lock"))
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
// The file is named after its content, in folder (privateFolder), so every run with the same CAs
// shares it.
func caBundle(caFile, folder string) (string, *x509.CertPool, error) {
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
