package kakapotest_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/OWNER/kakapo/clients/go/kakapotest"
)

// hangGuard bounds what could otherwise hang (a request, a child process); no test depends on it
// being short.
const hangGuard = 3 * time.Minute

// The environment variable that makes the test binary run one scenario of a test (in a process of
// its own, with the default server in its working directory) instead of the suite.
const scenarioVariable = "KAKAPOTEST_SCENARIO"

var (
	// root is the shared server's cassette folder, a temporary one.
	root string
	// tlsUpstream is an HTTPS upstream whose certificate the shared server trusts (--upstream-ca).
	tlsUpstream *upstream
)

func TestMain(m *testing.M) {
	if os.Getenv(scenarioVariable) != "" {
		kakapotest.Main(m) // as a user's TestMain: the server's folder is the working directory
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	folder, err := os.MkdirTemp("", "kakapotest-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(folder)
	root = filepath.Join(folder, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tlsUpstream = startUpstream(true)
	defer tlsUpstream.Close()
	ca := filepath.Join(folder, "upstream-ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsUpstream.Certificate().Raw})
	if err := os.WriteFile(ca, block, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return kakapotest.Run(m, kakapotest.ServerOptions{Dir: root, Args: []string{"--upstream-ca", ca}})
}

// upstream is a tiny JSON API: GET /users/N answers {"id": "N", "name": "user N"}.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int // by path
}

func startUpstream(tls bool) *upstream {
	u := &upstream{hits: map[string]int{}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.hits[r.URL.Path]++
		u.mu.Unlock()
		id := strings.TrimPrefix(r.URL.Path, "/users/")
		if r.Method != http.MethodGet || id == r.URL.Path || id == "" {
			http.Error(w, `{"error": "not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"id\": %q, \"name\": \"user %s\"}\n", id, id)
	})
	if tls {
		u.Server = httptest.NewTLSServer(handler)
	} else {
		u.Server = httptest.NewServer(handler)
	}
	return u
}

func newUpstream(t *testing.T) *upstream {
	u := startUpstream(false)
	t.Cleanup(u.Close)
	return u
}

// Hits is how many requests for path the upstream answered.
func (u *upstream) Hits(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits[path]
}

type answer struct {
	status int
	body   string
	header http.Header
}

// get sends GET url with client and reads the whole answer.
func get(t testing.TB, client *http.Client, url string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("%v", err)
	}
	response, err := client.Do(request)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return answer{response.StatusCode, string(body), response.Header}
}

func userBody(id string) string {
	return fmt.Sprintf("{\"id\": %q, \"name\": \"user %s\"}\n", id, id)
}

// forget removes the cassettes a test records, so it starts afresh (go test -count=N runs it again
// in the same process, with the same server and folder).
func forget(t *testing.T, relative string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(root, "cassettes", filepath.FromSlash(relative))); err != nil {
		t.Fatal(err)
	}
}

func mustClose(t testing.TB, k *kakapotest.Recorder) kakapotest.Summary {
	t.Helper()
	summary, err := k.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	return summary
}

func mustExist(t testing.TB, file string) string {
	t.Helper()
	content, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the cassette: %v", err)
	}
	return string(content)
}

// fakeT is a test for Session whose failures are recorded instead of failing the real test; Fatalf
// ends the goroutine running the fake's body, as the testing package's does.
type fakeT struct {
	testing.TB // the real test, for what the fake does not change
	name       string
	mu         sync.Mutex
	errors     []string
	logs       []string
	fatal      string
	panics     []string // what the body or a clean-up panicked with
	cleanups   []func()
}

func newFake(t *testing.T, name string) *fakeT { return &fakeT{TB: t, name: name} }

func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Helper()      {}

func (f *fakeT) Errorf(format string, args ...interface{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeT) Fatalf(format string, args ...interface{}) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeT) Logf(format string, args ...interface{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Cleanup(cleanup func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, cleanup)
}

// run runs body as the fake test's body, then its clean-ups, last registered first. A panic is
// recorded, not the end of the test binary.
func (f *fakeT) run(body func(t testing.TB)) {
	inGoroutine := func(step func()) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() {
				if r := recover(); r != nil {
					f.mu.Lock()
					f.panics = append(f.panics, fmt.Sprint(r))
					f.mu.Unlock()
				}
			}()
			step()
		}()
		<-done
	}
	inGoroutine(func() { body(f) })
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		inGoroutine(f.cleanups[i])
	}
}

func TestCassetteName(t *testing.T) {
	// The hashes are pytest-kakapo's for the same names (its _file_safe).
	long := strings.Repeat("x", 200)
	for name, want := range map[string]string{
		"TestGet":              "TestGet.json",
		"TestGet/user_1":       "TestGet/user_1.json",
		"TestGet/n=1":          "TestGet/n_1-a269f7e0.json",
		"TestGet/case#01":      "TestGet/case_01-791c5c65.json",
		"TestGet/#00":          "TestGet/00-c6330a07.json",
		"TestGet/..":           "TestGet/test-5ec1f7e7.json",
		"TestGet/a b":          "TestGet/a_b-c8687a08.json",
		"TestGet/" + long:      "TestGet/" + strings.Repeat("x", 130) + "_aa20c23e32018340.json",
		"TestGet/user_1/inner": "TestGet/user_1/inner.json",
	} {
		if got := kakapotest.CassetteName(name); got != want {
			t.Errorf("CassetteName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestRecordThenReplay(t *testing.T) {
	t.Parallel()
	forget(t, "record-replay")
	up := newUpstream(t)
	cassette := filepath.Join(root, "cassettes", "record-replay", "users.json")
	options := kakapotest.Options{Mode: "once", Cassette: "record-replay/users.json"}
	t.Run("record", func(t *testing.T) {
		k := kakapotest.Session(t, options)
		if k.Mode != "new" || k.Cassette != cassette {
			t.Fatalf("mode once on no cassette: mode %q, cassette %q; want new, %s", k.Mode, k.Cassette, cassette)
		}
		got := get(t, k.Client, up.URL+"/users/1")
		if got.status != 200 || got.body != userBody("1") || got.header.Get("X-Kakapo-Source") != "upstream" {
			t.Fatalf("recording: %d %q from %q", got.status, got.body, got.header.Get("X-Kakapo-Source"))
		}
		summary := mustClose(t, k)
		if summary.Recorded != 1 || summary.Replayed != 0 || len(summary.Misses) != 0 {
			t.Fatalf("summary: %+v", summary)
		}
		if content := mustExist(t, cassette); !strings.Contains(content, "/users/1") {
			t.Fatalf("the cassette does not hold the request:\n%s", content)
		}
	})
	up.Close()
	for _, mode := range []string{"none", "once"} {
		options.Mode = mode
		t.Run("replay in mode "+mode, func(t *testing.T) {
			k := kakapotest.Session(t, options)
			if k.Mode != "none" {
				t.Fatalf("mode %s on a recorded cassette is %q, want none", mode, k.Mode)
			}
			got := get(t, k.Client, up.URL+"/users/1")
			if got.status != 200 || got.body != userBody("1") || got.header.Get("X-Kakapo-Source") != "cassette" {
				t.Fatalf("replaying: %d %q from %q", got.status, got.body, got.header.Get("X-Kakapo-Source"))
			}
			if summary := mustClose(t, k); summary.Replayed != 1 || summary.Recorded != 0 || len(summary.Misses) != 0 {
				t.Fatalf("summary: %+v", summary)
			}
		})
	}
	if hits := up.Hits("/users/1"); hits != 1 {
		t.Fatalf("the upstream answered %d requests, want 1 (the recording)", hits)
	}
}

func TestHTTPS(t *testing.T) {
	t.Parallel()
	forget(t, "TestHTTPS")
	before := tlsUpstream.Hits("/users/7")
	t.Run("record", func(t *testing.T) {
		k := kakapotest.Session(t, kakapotest.Options{Mode: "once"})
		got := get(t, k.Client, tlsUpstream.URL+"/users/7")
		if got.status != 200 || got.body != userBody("7") || got.header.Get("X-Kakapo-Source") != "upstream" {
			t.Fatalf("recording through a decrypted tunnel: %d %q from %q", got.status, got.body, got.header.Get("X-Kakapo-Source"))
		}
		if summary := mustClose(t, k); summary.Recorded != 1 {
			t.Fatalf("summary: %+v", summary)
		}
		content := mustExist(t, filepath.Join(root, "cassettes", "TestHTTPS", "record.json"))
		if !strings.Contains(content, strings.TrimPrefix(tlsUpstream.URL, "https://")+"/users/7") {
			t.Fatalf("the cassette does not hold the request:\n%s", content)
		}
	})
	t.Run("replay", func(t *testing.T) {
		k := kakapotest.Session(t, kakapotest.Options{Mode: "none", Cassette: "TestHTTPS/record.json"})
		got := get(t, k.Client, tlsUpstream.URL+"/users/7")
		if got.status != 200 || got.body != userBody("7") || got.header.Get("X-Kakapo-Source") != "cassette" {
			t.Fatalf("replaying: %d %q from %q", got.status, got.body, got.header.Get("X-Kakapo-Source"))
		}
	})
	if hits := tlsUpstream.Hits("/users/7") - before; hits != 1 {
		t.Fatalf("the upstream answered %d requests, want 1 (the recording)", hits)
	}
}

func TestParallelSubtests(t *testing.T) {
	t.Parallel()
	forget(t, "TestParallelSubtests")
	up := newUpstream(t)
	const count = 8
	t.Run("record", func(t *testing.T) {
		for i := 0; i < count; i++ {
			id := fmt.Sprint(i)
			t.Run("user "+id, func(t *testing.T) {
				t.Parallel()
				k := kakapotest.Session(t, kakapotest.Options{Mode: "once"})
				want := filepath.Join(root, "cassettes", "TestParallelSubtests", "record", "user_"+id+".json")
				if k.Cassette != want || k.Mode != "new" {
					t.Fatalf("cassette %s in mode %s, want %s in mode new", k.Cassette, k.Mode, want)
				}
				if got := get(t, k.Client, up.URL+"/users/"+id); got.status != 200 || got.body != userBody(id) {
					t.Fatalf("recording: %d %q", got.status, got.body)
				}
				if summary := mustClose(t, k); summary.Recorded != 1 || len(summary.Misses) != 0 {
					t.Fatalf("summary: %+v", summary)
				}
				var file struct {
					Interactions []struct {
						Request struct {
							URL string `json:"url"`
						} `json:"request"`
					} `json:"interactions"`
				}
				if err := json.Unmarshal([]byte(mustExist(t, want)), &file); err != nil {
					t.Fatalf("the cassette: %v", err)
				}
				if len(file.Interactions) != 1 || !strings.HasSuffix(file.Interactions[0].Request.URL, "/users/"+id) {
					t.Fatalf("the cassette holds %+v, want this test's one request", file.Interactions)
				}
			})
		}
	})
	up.Close()
	t.Run("replay", func(t *testing.T) {
		for i := 0; i < count; i++ {
			id := fmt.Sprint(i)
			t.Run("user "+id, func(t *testing.T) {
				t.Parallel()
				k := kakapotest.Session(t, kakapotest.Options{Mode: "none", Cassette: "TestParallelSubtests/record/user_" + id + ".json"})
				if got := get(t, k.Client, up.URL+"/users/"+id); got.status != 200 || got.body != userBody(id) {
					t.Fatalf("replaying: %d %q", got.status, got.body)
				}
				if summary := mustClose(t, k); summary.Replayed != 1 || len(summary.Misses) != 0 {
					t.Fatalf("summary: %+v", summary)
				}
			})
		}
	})
}

func TestChildProcess(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on PATH")
	}
	forget(t, "TestChildProcess")
	up := newUpstream(t)
	before := tlsUpstream.Hits("/users/3")
	urls := []string{up.URL + "/users/2", tlsUpstream.URL + "/users/3"}
	curlAll := func(t *testing.T, k *kakapotest.Recorder) {
		for i, url := range urls {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			cmd := exec.CommandContext(ctx, curl, "--silent", "--show-error", "--fail", url)
			cmd.Env = append(os.Environ(), k.Env...)
			out, err := cmd.CombinedOutput()
			cancel()
			if want := userBody([]string{"2", "3"}[i]); err != nil || string(out) != want {
				t.Fatalf("curl %s: %v: %q, want %q", url, err, out, want)
			}
		}
	}
	t.Run("record", func(t *testing.T) {
		k := kakapotest.Session(t, kakapotest.Options{Mode: "once", Cassette: "TestChildProcess/curl.json"})
		curlAll(t, k)
		if summary := mustClose(t, k); summary.Recorded != 2 {
			t.Fatalf("summary: %+v", summary)
		}
	})
	up.Close()
	t.Run("replay", func(t *testing.T) {
		k := kakapotest.Session(t, kakapotest.Options{Mode: "none", Cassette: "TestChildProcess/curl.json"})
		curlAll(t, k)
		if summary := mustClose(t, k); summary.Replayed != 2 || len(summary.Misses) != 0 {
			t.Fatalf("summary: %+v", summary)
		}
	})
	if hits, tlsHits := up.Hits("/users/2"), tlsUpstream.Hits("/users/3")-before; hits != 1 || tlsHits != 1 {
		t.Fatalf("the upstreams answered %d and %d requests, want 1 each", hits, tlsHits)
	}
}

// recordUsers1 records one GET /users/1 into cassette (relative to cassettes/).
func recordUsers1(t *testing.T, up *upstream, cassette string) {
	t.Helper()
	forget(t, cassette)
	k := kakapotest.Session(t, kakapotest.Options{Mode: "all", Cassette: cassette})
	get(t, k.Client, up.URL+"/users/1")
	if summary := mustClose(t, k); summary.Recorded != 1 {
		t.Fatalf("summary: %+v", summary)
	}
}

func TestStrictMissFailsTheTest(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	recordUsers1(t, up, "TestStrictMissFailsTheTest.json")
	fake := newFake(t, "TestStrictMissFailsTheTest")
	var k *kakapotest.Recorder
	var first kakapotest.Summary
	fake.run(func(ft testing.TB) {
		k = kakapotest.Session(ft, kakapotest.Options{Mode: "none"})
		got := get(ft, k.Client, up.URL+"/users/2")
		if got.status != 404 || !strings.Contains(got.body, "kakapo_miss") {
			t.Errorf("a miss answers %d %q", got.status, got.body)
		}
		var err error
		if first, err = k.Close(); err != nil || len(first.Misses) != 1 {
			t.Errorf("Close: %+v, %v", first, err)
		}
	})
	if fake.fatal != "" {
		t.Fatalf("the session did not open: %s", fake.fatal)
	}
	again, err := k.Close() // the clean-up asked nothing more of Kakapo: the same answer, no 404
	if err != nil || again.ID != first.ID || len(again.Misses) != 1 {
		t.Fatalf("Close again: %+v, %v", again, err)
	}
	if len(fake.errors) != 1 {
		t.Fatalf("the test failed %d times, want once with the report: %q", len(fake.errors), fake.errors)
	}
	host := strings.TrimPrefix(up.URL, "http://")
	want := []string{
		"Kakapo: 1 request(s) missed cassette cassettes/TestStrictMissFailsTheTest.json (mode none, session " + k.ID + "):",
		"  GET http://" + host + "/users/2: ",
		"    nearest: #0 GET http://" + host + "/users/1",
		"      path: /users/2 here, /users/1 recorded",
		"Record it with KAKAPO_RECORD=new (or Options{Mode: \"new\"}), or fix the request.",
	}
	lines := strings.Split(fake.errors[0], "\n")
	if len(lines) != len(want) {
		t.Fatalf("the report:\n%s", fake.errors[0])
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, want[i]) {
			t.Errorf("line %d of the report is %q, want it to start with %q", i+1, line, want[i])
		}
	}
	if logs := strings.Join(fake.logs, "\n"); !strings.Contains(logs, "  unused: #0 GET http://"+host+"/users/1") {
		t.Errorf("the unused recording is not logged: %q", logs)
	}
}

func TestLenientMissIsLogged(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	recordUsers1(t, up, "TestLenientMissIsLogged.json")
	fake := newFake(t, "TestLenientMissIsLogged")
	fake.run(func(ft testing.TB) {
		k := kakapotest.Session(ft, kakapotest.Options{Mode: "none", Lenient: true})
		if k.Strict {
			t.Errorf("a lenient session says it is strict")
		}
		get(ft, k.Client, up.URL+"/users/1")
		get(ft, k.Client, up.URL+"/users/3")
	})
	if fake.fatal != "" || len(fake.errors) != 0 {
		t.Fatalf("a lenient session failed the test: %q %q", fake.fatal, fake.errors)
	}
	if logs := strings.Join(fake.logs, "\n"); !strings.Contains(logs, "Kakapo: 1 request(s) missed cassette") {
		t.Fatalf("the report is not logged: %q", logs)
	}
}

// fatalOf is the message a session for a fake test stops it with ("" when it opened).
func fatalOf(t *testing.T, server *kakapotest.Server, name string, options kakapotest.Options) string {
	fake := newFake(t, name)
	fake.run(func(ft testing.TB) {
		if server == nil {
			kakapotest.Session(ft, options)
		} else {
			server.Session(ft, options)
		}
	})
	if len(fake.panics) > 0 {
		t.Errorf("Session panicked: %q", fake.panics)
	}
	return fake.fatal
}

func TestInvalidRecordMode(t *testing.T) {
	unused := kakapotest.NewServer(kakapotest.ServerOptions{}) // never started: modes are checked first
	t.Setenv("KAKAPO_RECORD", "sometimes")
	want := "kakapotest: KAKAPO_RECORD=sometimes: not a record mode; it is one of none, new, all, once, passthrough"
	if got := fatalOf(t, unused, "TestX", kakapotest.Options{}); got != want {
		t.Errorf("KAKAPO_RECORD=sometimes: %q, want %q", got, want)
	}
	t.Setenv("KAKAPO_RECORD", "")
	want = `kakapotest: Options{Mode: "always"}: not a record mode; it is one of none, new, all, once, passthrough`
	if got := fatalOf(t, unused, "TestX", kakapotest.Options{Mode: "always"}); got != want {
		t.Errorf("Options{Mode: always}: %q, want %q", got, want)
	}
}

func TestInvalidRecordModeStopsTheRun(t *testing.T) {
	t.Parallel()
	out, err := scenario(t, t.TempDir(), "none", "KAKAPO_RECORD=sometimes")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("the run ended with %v, want status 2:\n%s", err, out)
	}
	want := "kakapotest: KAKAPO_RECORD=sometimes: not a record mode; it is one of none, new, all, once, passthrough\n"
	if out != want {
		t.Fatalf("the run printed %q, want %q", out, want)
	}
}

func TestCassetteOutsideTheFolder(t *testing.T) {
	t.Parallel()
	for _, cassette := range []string{"../escape.json", "/tmp/absolute.json", "."} {
		got := fatalOf(t, nil, "TestX", kakapotest.Options{Cassette: cassette})
		if !strings.Contains(got, "a cassette is a path inside the cassettes/ folder") {
			t.Errorf("Options{Cassette: %q}: %q", cassette, got)
		}
	}
}

func TestModeNoneNeedsTheCassette(t *testing.T) {
	t.Parallel()
	got := fatalOf(t, nil, "TestModeNoneNeedsTheCassette/never recorded", kakapotest.Options{Mode: "none"})
	want := "kakapotest: mode none replays only, and cassette " + filepath.Join(root, "cassettes", "TestModeNoneNeedsTheCassette",
		kakapotest.CassetteName("never recorded")) + " does not exist: record it first"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("%q, want it to start with %q", got, want)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Setenv("KAKAPO_RECORD", "")
	t.Setenv("KAKAPO_BIN", "")
	t.Setenv("PATH", t.TempDir())
	got := fatalOf(t, kakapotest.NewServer(kakapotest.ServerOptions{}), "TestX", kakapotest.Options{})
	want := "kakapotest: cannot find the kakapo executable: set Options.Binary (or ServerOptions.Binary), set KAKAPO_BIN, or put kakapo on PATH"
	if got != want {
		t.Errorf("no binary anywhere: %q, want %q", got, want)
	}
	missing := filepath.Join(t.TempDir(), "kakapo")
	t.Setenv("KAKAPO_BIN", missing)
	got = fatalOf(t, kakapotest.NewServer(kakapotest.ServerOptions{}), "TestX", kakapotest.Options{})
	if want := "kakapotest: KAKAPO_BIN=" + missing + ": no executable file at " + missing; got != want {
		t.Errorf("KAKAPO_BIN on nothing: %q, want %q", got, want)
	}
	got = fatalOf(t, kakapotest.NewServer(kakapotest.ServerOptions{}), "TestX", kakapotest.Options{Binary: "no/such/kakapo"})
	if !strings.HasPrefix(got, `kakapotest: Options{Binary: "no/such/kakapo"}: no executable file at `) ||
		!strings.Contains(got, "a relative path is taken from the test's working directory") {
		t.Errorf("Options.Binary on nothing: %q", got)
	}
}

func TestRecorderFields(t *testing.T) {
	t.Parallel()
	k := kakapotest.Session(t, kakapotest.Options{Mode: "passthrough"})
	if k.ID == "" || k.Header.Get("X-Kakapo-Session") != k.ID {
		t.Errorf("id %q, header %v", k.ID, k.Header)
	}
	if !strings.HasPrefix(k.URL, "http://127.0.0.1:") || k.ProxyURL != "http://"+k.ID+":@"+strings.TrimPrefix(k.URL, "http://") {
		t.Errorf("URL %q, proxy URL %q", k.URL, k.ProxyURL)
	}
	env := strings.Join(k.Env, "\n") + "\n"
	for _, entry := range []string{
		"HTTP_PROXY=" + k.ProxyURL, "https_proxy=" + k.ProxyURL, "NO_PROXY=", "ALL_PROXY=",
		"SSL_CERT_FILE=" + k.CABundle, "CURL_CA_BUNDLE=" + k.CABundle,
	} {
		if !strings.Contains(env, entry+"\n") {
			t.Errorf("Env has no %s: %q", entry, k.Env)
		}
	}
	bundle := mustExist(t, k.CABundle)
	if strings.Count(bundle, "BEGIN CERTIFICATE") < 2 {
		t.Errorf("the CA bundle %s holds fewer than the system's CAs and Kakapo's", k.CABundle)
	}
	if k.Mode != "passthrough" || !k.Strict {
		t.Errorf("mode %q, strict %v", k.Mode, k.Strict)
	}
}

func TestServerWithUpstream(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	folder := t.TempDir()
	server := kakapotest.NewServer(kakapotest.ServerOptions{Dir: folder, Args: []string{"--upstream", up.URL}})
	if server.URL() != "" {
		t.Fatalf("a server that has not started has the URL %q", server.URL())
	}
	t.Cleanup(func() {
		if err := server.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if server.URL() != "" {
			t.Errorf("a stopped server has the URL %q", server.URL())
		}
	})
	k := server.Session(t, kakapotest.Options{Mode: "new"})
	if k.URL != server.URL() {
		t.Fatalf("the session's URL %q is not the server's %q", k.URL, server.URL())
	}
	request, err := http.NewRequest(http.MethodGet, k.URL+"/users/4", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range k.Header {
		request.Header[name] = values
	}
	response, err := (&http.Client{Timeout: hangGuard}).Do(request)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(response.Body)
	response.Body.Close()
	if response.StatusCode != 200 || string(body) != userBody("4") {
		t.Fatalf("through Kakapo's own URL: %d %q", response.StatusCode, body)
	}
	if summary := mustClose(t, k); summary.Recorded != 1 {
		t.Fatalf("summary: %+v", summary)
	}
	mustExist(t, filepath.Join(folder, "cassettes", "TestServerWithUpstream.json"))
}

// scenario runs this test binary again, in dir, running the scenario named (see TestScenario...)
// with the default server and more environment variables, and returns what it printed.
func scenario(t *testing.T, dir, name string, env ...string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-test.run=^TestScenario$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), scenarioVariable+"="+name), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestMissFailsTheTestInItsOwnProcess(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	dir := t.TempDir()
	out, err := scenario(t, dir, "miss", "KAKAPOTEST_UPSTREAM="+up.URL, "KAKAPO_RECORD=once")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the run ended with %v, want status 1 (a failed test):\n%s", err, out)
	}
	host := strings.TrimPrefix(up.URL, "http://")
	for _, want := range []string{
		"--- PASS: TestScenario/record",
		"--- FAIL: TestScenario/replay",
		"Kakapo: 1 request(s) missed cassette cassettes/users.json (mode none, session ",
		"  GET http://" + host + "/users/2: path: /users/2 here, /users/1 recorded (interaction 0)\n",
		"    nearest: #0 GET http://" + host + "/users/1\n",
		"      path: /users/2 here, /users/1 recorded\n",
		"Record it with KAKAPO_RECORD=new",
		"--- PASS: TestScenario/default_name",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the run did not print %q:\n%s", want, out)
		}
	}
	// The default server's folder is the working directory, as go test's is the package's.
	mustExist(t, filepath.Join(dir, "cassettes", "users.json"))
	mustExist(t, filepath.Join(dir, "cassettes", "TestScenario", "default_name.json"))
}

func TestServerEndsWithTheTestBinary(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux's")
	}
	up := newUpstream(t)
	dir := t.TempDir()
	out, err := scenario(t, dir, "orphan", "KAKAPOTEST_UPSTREAM="+up.URL, "KAKAPO_RECORD=once")
	if err != nil {
		t.Fatalf("the run: %v\n%s", err, out)
	}
	pid, start := 0, ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "kakapo pid ") {
			if _, err := fmt.Sscanf(line, "kakapo pid %d start %s", &pid, &start); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
	}
	if pid <= 0 {
		t.Fatalf("the run did not say kakapo's pid:\n%s", out)
	}
	// The test binary ended without stopping kakapo, with a session open: SIGTERM ends kakapo. The
	// replay waits for the process to be gone, so it never races what kakapo does last.
	deadline := time.Now().Add(hangGuard)
	for !processEnded(pid, start) {
		if time.Now().After(deadline) {
			t.Fatalf("kakapo (pid %d) still runs %s after the test binary ended", pid, hangGuard)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("kakapo (pid %d) has ended", pid)
	// What the open session recorded is kept (saved, or in the cassette's journal): the next run replays it.
	up.Close()
	out, err = scenario(t, dir, "orphan-replay", "KAKAPOTEST_UPSTREAM="+up.URL, "KAKAPO_RECORD=none")
	if err != nil || !strings.Contains(out, "--- PASS: TestScenario/open") {
		t.Fatalf("the replay: %v\n%s", err, out)
	}
}

// TestScenario is run by the tests above in a process of their own.
func TestScenario(t *testing.T) {
	name := os.Getenv(scenarioVariable)
	if name == "" {
		t.Skip("a scenario the other tests run in a process of their own")
	}
	up := os.Getenv("KAKAPOTEST_UPSTREAM")
	switch name {
	case "miss":
		t.Run("record", func(t *testing.T) {
			k := kakapotest.Session(t, kakapotest.Options{Mode: "new", Cassette: "users.json"})
			get(t, k.Client, up+"/users/1")
		})
		t.Run("replay", func(t *testing.T) {
			k := kakapotest.Session(t, kakapotest.Options{Mode: "none", Cassette: "users.json"})
			get(t, k.Client, up+"/users/2")
		})
		t.Run("default name", func(t *testing.T) {
			k := kakapotest.Session(t)
			get(t, k.Client, up+"/users/1")
		})
	case "orphan", "orphan-replay":
		t.Run("open", func(t *testing.T) {
			k := kakapotest.Session(t)
			got := get(t, k.Client, up+"/users/1")
			if name == "orphan" {
				pid := kakapotest.DefaultServerPID()
				fmt.Printf("kakapo pid %d start %s\n", pid, processStart(pid))
				os.Exit(0) // as a test binary that ends without Main stopping kakapo, nor the session ending
			}
			if k.Mode != "none" || got.status != 200 || got.body != userBody("1") || got.header.Get("X-Kakapo-Source") != "cassette" {
				t.Fatalf("replaying in mode %s: %d %q from %q", k.Mode, got.status, got.body, got.header.Get("X-Kakapo-Source"))
			}
		})
	default:
		t.Fatalf("no scenario %q", name)
	}
}
