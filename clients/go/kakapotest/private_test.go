package kakapotest_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/OWNER/kakapo/clients/go/kakapotest"
)

// cacheHome points os.UserCacheDir at a temporary folder (HOME and XDG_CACHE_HOME), so the test never
// touches the real cache, and returns the folder kakapotest keeps its CA bundle in.
func cacheHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", filepath.Join(home, "home"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(cache, "kakapotest")
}

// serverIn is a server of its own, with the default binary, stopped when the test ends.
func serverIn(t *testing.T) *kakapotest.Server {
	t.Helper()
	server := kakapotest.NewServer(kakapotest.ServerOptions{Dir: t.TempDir()})
	t.Cleanup(func() {
		if err := server.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return server
}

func mustBePrivate(t *testing.T, folder string) {
	t.Helper()
	info, err := os.Lstat(folder)
	if err != nil {
		t.Fatal(err)
	}
	if !info.IsDir() || info.Mode().Perm() != 0o700 {
		t.Fatalf("%s: mode %v, want a folder with mode 700", folder, info.Mode())
	}
}

func TestCABundleFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("folder modes and owners are Unix's")
	}
	t.Run("in the user's cache folder", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache")) // not made yet; HOME stays, for kakapo's CA
		if cache, _ := os.UserCacheDir(); cache != filepath.Join(home, "cache") {
			t.Skip("os.UserCacheDir does not follow XDG_CACHE_HOME here")
		}
		folder := filepath.Join(home, "cache", "kakapotest")
		k := serverIn(t).Session(t, kakapotest.Options{Mode: "passthrough"})
		if filepath.Dir(k.CABundle) != folder {
			t.Fatalf("the CA bundle is %s, want it in %s", k.CABundle, folder)
		}
		mustBePrivate(t, folder)
		if bundle := mustExist(t, k.CABundle); strings.Count(bundle, "BEGIN CERTIFICATE") < 2 {
			t.Errorf("the CA bundle holds fewer than the system's CAs and Kakapo's")
		}
		entries, err := os.ReadDir(folder)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, entry := range entries {
			names = append(names, entry.Name())
		}
		if want := []string{filepath.Base(k.CABundle), "ca.lock"}; len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
			t.Errorf("the folder holds %q, want the lock and the bundle (no temporary file left)", names)
		}
		// A second server shares the bundle.
		if again := serverIn(t).Session(t, kakapotest.Options{Mode: "passthrough"}); again.CABundle != k.CABundle {
			t.Errorf("a second server's CA bundle is %s, not %s", again.CABundle, k.CABundle)
		}
	})
	t.Run("without a cache folder", func(t *testing.T) {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "file"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "file", "cache")) // cannot be made
		if cache, _ := os.UserCacheDir(); cache != filepath.Join(home, "file", "cache") {
			t.Skip("os.UserCacheDir does not follow XDG_CACHE_HOME here")
		}
		k := serverIn(t).Session(t, kakapotest.Options{Mode: "passthrough"})
		folder := filepath.Dir(k.CABundle)
		if filepath.Dir(folder) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(folder), "kakapotest-") {
			t.Fatalf("the CA bundle is %s, want it in a folder of the process's own in %s", k.CABundle, os.TempDir())
		}
		mustBePrivate(t, folder)
	})
	for _, c := range []struct {
		name, why string
		make      func(t *testing.T, folder string) // puts what the test refuses at folder
	}{
		{"writable by others", "its group or others may write to it (mode 777)", func(t *testing.T, folder string) {
			mkdirMode(t, folder, 0o777)
		}},
		{"writable by its group", "its group or others may write to it (mode 770)", func(t *testing.T, folder string) {
			mkdirMode(t, folder, 0o770)
		}},
		{"a symbolic link", "it is a symbolic link, not a folder", func(t *testing.T, folder string) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			mkdirMode(t, target, 0o700)
			if err := os.Symlink(target, folder); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file", "it is not a folder", func(t *testing.T, folder string) {
			if err := os.WriteFile(folder, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"another user's", "it is owned by uid 65534, not by this user (uid 0)", func(t *testing.T, folder string) {
			if os.Getuid() != 0 {
				t.Skip("only root can give a folder to another user")
			}
			mkdirMode(t, folder, 0o700)
			if err := os.Chown(folder, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run("refuses "+c.name, func(t *testing.T) {
			folder := cacheHome(t)
			c.make(t, folder)
			before := listing(t, folder)
			got := fatalOf(t, kakapotest.NewServer(kakapotest.ServerOptions{Dir: t.TempDir()}), "TestX", kakapotest.Options{Mode: "passthrough"})
			want := "kakapotest: kakapotest keeps its CA bundle and lock in " + folder + ", and refuses it: " + c.why + ". Remove it"
			if !strings.HasPrefix(got, want) {
				t.Fatalf("the session stopped the test with %q, want %q...", got, want)
			}
			if after := listing(t, folder); after != before {
				t.Errorf("the refused folder changed: %s, then %s", before, after)
			}
		})
	}
}

func mkdirMode(t *testing.T, folder string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(folder, mode); err != nil { // not the umask's
		t.Fatal(err)
	}
}

// listing is what is at path (through a symbolic link) and its mode: its entries for a folder.
func listing(t *testing.T, path string) string {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	text := info.Mode().String()
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, entry := range entries {
			text += " " + entry.Name()
		}
	}
	return text
}
