package kakapotest

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// startTimeout bounds the wait for kakapo to say its port: a guard against a hang only.
	startTimeout = 60 * time.Second
	// stopTimeout bounds the wait for kakapo to end after SIGINT; then it is killed.
	stopTimeout = 30 * time.Second
	// adminTimeout bounds one admin call (ending a session waits for its requests in flight).
	adminTimeout = 60 * time.Second
	// maxLine is the longest line of kakapo's output read while it starts (and how much of its end
	// an error message quotes from); maxStartLines how many lines it may print before it says its port.
	maxLine       = 64 * 1024
	maxStartLines = 1000
	// maxAdminAnswer is the largest admin answer read (a summary lists misses and unused recordings);
	// maxErrorAnswer the most of an error answer quoted.
	maxAdminAnswer = 64 << 20
	maxErrorAnswer = 64 << 10
)

// proxyVariables name a proxy for the clients that read them; the server's process gets none of
// them (nor otherProxyVariables), so its upstream requests go straight out.
var (
	proxyVariables      = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}
	otherProxyVariables = []string{"ALL_PROXY", "all_proxy"}
	listening           = regexp.MustCompile(`listening on https?://127\.0\.0\.1:(\d{1,5})\b`)
)

// ServerOptions configure a Kakapo server. The zero value is the default server's.
type ServerOptions struct {
	// Binary is the kakapo executable. Default: $KAKAPO_BIN, then kakapo on PATH. A relative path
	// is taken from the working directory (go test runs a package's tests in its folder).
	Binary string
	// Dir is the server's --cassette-dir: cassettes are Dir/cassettes/... Default: the working
	// directory when the server starts (the package's folder under go test).
	Dir string
	// Args are more arguments of kakapo serve, such as "--upstream-ca", "ca.pem" (trust a test
	// server's certificate), "--upstream", URL (for clients pointed at Recorder.URL) or "--ca-dir", DIR.
	Args []string
}

// Server is one `kakapo serve --proxy --cassette-dir DIR --port 0` process, started by its first
// session and stopped by Stop. Its methods are safe for concurrent use.
type Server struct {
	mu      sync.Mutex
	options ServerOptions
	run     *running // nil until started, and again after Stop
	err     error    // why it could not start; every later session fails with it
}

// running is a started server process.
type running struct {
	binary  string
	dir     string
	url     string
	bundle  string
	roots   *x509.CertPool
	cmd     *exec.Cmd
	admin   *http.Client
	output  *logFile
	exited  chan struct{} // closed when the process has ended (waitErr is then set)
	waitErr error
}

var (
	defaultMu sync.Mutex
	theServer = &Server{}
)

func defaultServer() *Server {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	return theServer
}

// NewServer is a server of its own (the package's functions share one default server). It starts
// with its first session.
func NewServer(options ServerOptions) *Server {
	return &Server{options: options}
}

// Main runs the tests of m with the default server configured by options (when given) and then
// stops it, and exits with the tests' status; call it from TestMain:
//
//	func TestMain(m *testing.M) { kakapotest.Main(m) }
//
// A KAKAPO_RECORD that is no record mode stops the run before any test, with status 2.
func Main(m *testing.M, options ...ServerOptions) {
	os.Exit(Run(m, options...))
}

// Run is Main without the exit: it returns the tests' status, for a TestMain that has more to do
// afterwards.
func Run(m *testing.M, options ...ServerOptions) int {
	if _, err := recordMode(); err != nil {
		fmt.Fprintf(os.Stderr, "kakapotest: %v\n", err)
		return 2
	}
	if len(options) > 1 {
		fmt.Fprintf(os.Stderr, "kakapotest: Main and Run take at most one ServerOptions, not %d\n", len(options))
		return 2
	}
	server := defaultServer()
	if len(options) == 1 {
		server.mu.Lock()
		if server.run != nil {
			server.mu.Unlock()
			fmt.Fprintln(os.Stderr, "kakapotest: the default server is already running: Main and Run configure it before any session")
			return 2
		}
		server.options = options[0]
		server.err = nil
		server.mu.Unlock()
	}
	code := m.Run()
	if err := server.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "kakapotest: %v\n", err)
	}
	removeProcessFolder()
	return code
}

// URL is the server's address (http://127.0.0.1:PORT), or "" before its first session.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		return ""
	}
	return s.run.url
}

// Stop ends the server: SIGINT, which lets it finish the requests in flight and save every session
// still open, then waits for it (it is killed if it has not ended after 30 s). A later session
// starts it again. Stopping a server that is not running does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.run
	s.run, s.err = nil, nil
	if run == nil {
		return nil
	}
	defer run.admin.CloseIdleConnections()
	defer run.output.close()
	select {
	case <-run.exited:
		return run.exitError("before it was stopped")
	default:
	}
	if err := run.cmd.Process.Signal(os.Interrupt); err != nil { // Windows has no SIGINT: killed
		_ = run.cmd.Process.Kill()
	}
	select {
	case <-run.exited:
	case <-time.After(stopTimeout):
		_ = run.cmd.Process.Kill()
		<-run.exited
		return fmt.Errorf("kakapo (pid %d) did not end within %s of SIGINT and was killed; its last output:\n%s",
			run.cmd.Process.Pid, stopTimeout, run.output.last(20))
	}
	var exit *exec.ExitError
	// Ended by the signal itself (-1) rather than by its handler is no trouble either.
	if errors.As(run.waitErr, &exit) && exit.ExitCode() != 0 && exit.ExitCode() != -1 {
		return run.exitError("when it was stopped")
	}
	return nil
}

// ensureStarted is the running server, started now (with binary, when given, as the executable)
// if it is not running yet.
func (s *Server) ensureStarted(binary string) (*running, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if s.run != nil {
		select {
		case <-s.run.exited:
			return nil, s.run.exitError("during the run")
		default:
		}
		if binary != "" {
			if found, err := executable(binary, "Options{Binary: "+strconv.Quote(binary)+"}"); err != nil {
				return nil, err
			} else if !sameFile(found, s.run.binary) {
				return nil, fmt.Errorf("Options{Binary: %q}: the server already runs %s (the binary is chosen by the session that starts it)", binary, s.run.binary)
			}
		}
		return s.run, nil
	}
	run, err := s.start(binary)
	if err != nil {
		s.err = err
		return nil, err
	}
	s.run = run
	return run, nil
}

func sameFile(a, b string) bool {
	first, err1 := os.Stat(a)
	second, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(first, second)
}

// findBinary is the kakapo executable: given (Options.Binary), then ServerOptions.Binary, then
// $KAKAPO_BIN, then kakapo on PATH.
func (s *Server) findBinary(given string) (string, error) {
	if given != "" {
		return executable(given, "Options{Binary: "+strconv.Quote(given)+"}")
	}
	if s.options.Binary != "" {
		return executable(s.options.Binary, "ServerOptions{Binary: "+strconv.Quote(s.options.Binary)+"}")
	}
	if env := os.Getenv("KAKAPO_BIN"); env != "" {
		return executable(env, "KAKAPO_BIN="+env)
	}
	if found, err := exec.LookPath("kakapo"); err == nil {
		return filepath.Abs(found)
	}
	return "", errors.New("cannot find the kakapo executable: set Options.Binary (or ServerOptions.Binary), " +
		"set KAKAPO_BIN, or put kakapo on PATH")
}

// executable is path made absolute, when an executable file is there; named says where it came from.
func executable(path, named string) (string, error) {
	absolute, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", named, err)
	}
	if _, err := exec.LookPath(absolute); err != nil {
		where := ""
		if !filepath.IsAbs(path) {
			where = " (a relative path is taken from the test's working directory, its package's folder)"
		}
		return "", fmt.Errorf("%s: no executable file at %s%s", named, absolute, where)
	}
	return absolute, nil
}

func (s *Server) start(given string) (*running, error) {
	binary, err := s.findBinary(given)
	if err != nil {
		return nil, err
	}
	dir := s.options.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("the cassette folder: %v", err)
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("the cassette folder: %v", err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("the cassette folder %s is not a folder", dir)
	}
	folder, err := privateFolder()
	if err != nil {
		return nil, err
	}
	caFile, err := kakapoCA(binary, caDirArgument(s.options.Args), folder)
	if err != nil {
		return nil, err
	}
	bundle, roots, err := caBundle(caFile, folder)
	if err != nil {
		return nil, err
	}
	arguments := append([]string{"serve", "--proxy", "--cassette-dir", dir, "--port", "0"}, s.options.Args...)
	cmd := exec.Command(binary, arguments...)
	cmd.Env = serverEnvironment()
	setProcessAttributes(cmd)
	// kakapo writes to a file, not a pipe: a pipe breaks when the test binary ends without stopping
	// it, and kakapo would then fail on its last lines before saving the sessions still open.
	output, err := newLogFile()
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: its log file: %v", binary, err)
	}
	cmd.Stdout, cmd.Stderr = output.writer, output.writer
	run := &running{
		binary: binary,
		dir:    dir,
		bundle: bundle,
		roots:  roots,
		cmd:    cmd,
		output: output,
		exited: make(chan struct{}),
		admin: &http.Client{
			Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second},
			Timeout:   adminTimeout,
		},
	}
	started := make(chan error, 1)
	go func() {
		// On Linux the process gets SIGTERM when the thread that started it ends (Pdeathsig): this
		// goroutine keeps that thread to itself for as long as the process runs, so it is the test
		// binary's end, and nothing else, that stops an unstopped kakapo.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		run.waitErr = cmd.Wait()
		close(run.exited)
	}()
	err = <-started
	output.started()
	if err != nil {
		output.close()
		return nil, fmt.Errorf("cannot start %s: %v", binary, err)
	}
	command := binary + " " + strings.Join(arguments, " ")
	port, err := run.waitForPort()
	if err != nil {
		err = fmt.Errorf("%s %v; its output:\n%s", command, err, output.last(20))
		output.close()
		return nil, err
	}
	run.url = "http://127.0.0.1:" + strconv.Itoa(port)
	return run, nil
}

// waitForPort reads kakapo's output until it says the port it listens on (within its first
// maxStartLines lines and startTimeout), and returns it.
func (run *running) waitForPort() (int, error) {
	deadline := time.Now().Add(startTimeout)
	var offset int64
	var pending []byte
	lines := 0
	chunk := make([]byte, 32*1024)
	for {
		ended := false
		select {
		case <-run.exited:
			ended = true // what it wrote before it ended is read below
		default:
		}
		for {
			n, err := run.output.reader.ReadAt(chunk, offset)
			offset += int64(n)
			pending = append(pending, chunk[:n]...)
			if err != nil || n == 0 {
				break
			}
		}
		for {
			end := bytes.IndexByte(pending, '\n')
			if end < 0 && len(pending) > maxLine {
				end = len(pending) // a line too long to be the one: skipped
			}
			if end < 0 {
				break
			}
			line := string(pending[:end])
			pending = pending[min(end+1, len(pending)):]
			lines++
			if match := listening.FindStringSubmatch(line); match != nil {
				if p, _ := strconv.Atoi(match[1]); p > 0 && p < 65536 {
					return p, nil
				}
			}
			if lines >= maxStartLines {
				run.kill()
				return 0, fmt.Errorf("printed %d lines without saying which port it listens on", lines)
			}
		}
		if ended {
			return 0, fmt.Errorf("ended (%v) before it said which port it listens on", run.waitErr)
		}
		if time.Now().After(deadline) {
			run.kill()
			return 0, fmt.Errorf("did not say which port it listens on within %s", startTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// kill ends the process at once and waits for it.
func (run *running) kill() {
	_ = run.cmd.Process.Kill()
	<-run.exited
}

// exitError says that the process ended, how, and what it printed last.
func (run *running) exitError(when string) error {
	return fmt.Errorf("kakapo (pid %d) ended %s (%v); its last output:\n%s",
		run.cmd.Process.Pid, when, run.waitErr, run.output.last(20))
}

// serverEnvironment is this process's environment without the proxy variables.
func serverEnvironment() []string {
	drop := map[string]bool{}
	for _, name := range append(append([]string{}, proxyVariables...), otherProxyVariables...) {
		drop[name] = true
	}
	var env []string
	for _, entry := range os.Environ() {
		name := entry
		if i := strings.IndexByte(entry, '='); i >= 0 {
			name = entry[:i]
		}
		if !drop[name] {
			env = append(env, entry)
		}
	}
	return env
}

// caDirArgument is the value of --ca-dir among kakapo serve's arguments, or "".
func caDirArgument(arguments []string) string {
	for i, argument := range arguments {
		if argument == "--ca-dir" && i+1 < len(arguments) {
			return arguments[i+1]
		}
		if strings.HasPrefix(argument, "--ca-dir=") {
			return strings.TrimPrefix(argument, "--ca-dir=")
		}
	}
	return ""
}

// call sends an admin request straight to kakapo (never through a proxy) and decodes its JSON answer
// into out (when not nil).
func (run *running) call(method, path string, body, out interface{}) error {
	status, raw, err := run.send(method, path, body)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return answerError(method, path, status, raw)
	}
	if err := decodeJSON(raw, out); err != nil {
		return fmt.Errorf("kakapo's answer to %s %s is not the JSON expected: %v", method, path, err)
	}
	return nil
}

func (run *running) send(method, path string, body interface{}) (int, []byte, error) {
	var payload io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		payload = bytes.NewReader(encoded)
	}
	request, err := http.NewRequest(method, run.url+path, payload)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	if token := os.Getenv("KAKAPO_ADMIN_TOKEN"); token != "" {
		request.Header.Set("Authorization", "Bearer "+token)
	}
	answer, err := run.admin.Do(request)
	if err != nil {
		select {
		case <-run.exited:
			return 0, nil, run.exitError("during the run")
		default:
		}
		return 0, nil, fmt.Errorf("kakapo at %s did not answer %s %s: %v", run.url, method, path, err)
	}
	defer answer.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(answer.Body, maxAdminAnswer+1))
	if err != nil {
		return 0, nil, fmt.Errorf("kakapo's answer to %s %s broke off: %v", method, path, err)
	}
	if len(raw) > maxAdminAnswer {
		return 0, nil, fmt.Errorf("kakapo's answer to %s %s is larger than %d bytes", method, path, maxAdminAnswer)
	}
	return answer.StatusCode, raw, nil
}

func answerError(method, path string, status int, raw []byte) error {
	if len(raw) > maxErrorAnswer {
		raw = raw[:maxErrorAnswer]
	}
	detail := strings.TrimSpace(string(raw))
	var parsed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &parsed) == nil && parsed.Error != "" {
		detail = parsed.Error
	}
	return fmt.Errorf("kakapo answered %d to %s %s: %s", status, method, path, detail)
}

// endSession ends a session and returns its summary; a cassette Kakapo could not save is an error
// that comes with the summary.
func (run *running) endSession(id string) (Summary, error) {
	select {
	case <-run.exited:
		return Summary{}, fmt.Errorf("kakapo (pid %d) ended before session %s did (%v)", run.cmd.Process.Pid, id, run.waitErr)
	default:
	}
	path := "/__kakapo/sessions/" + url.PathEscape(id)
	status, raw, err := run.send("DELETE", path, nil)
	if err != nil {
		return Summary{}, err
	}
	var summary Summary
	if status == http.StatusInternalServerError && json.Unmarshal(raw, &summary) == nil && summary.SaveError != "" {
		return summary, fmt.Errorf("kakapo could not save cassette %s: %s", orUnknown(summary.Cassette), clip(summary.SaveError))
	}
	if status < 200 || status > 299 {
		return Summary{}, answerError("DELETE", path, status, raw)
	}
	if err := json.Unmarshal(raw, &summary); err != nil {
		return Summary{}, fmt.Errorf("kakapo's answer to DELETE %s is not a session summary: %v", path, err)
	}
	if summary.ID != id {
		return Summary{}, fmt.Errorf("kakapo's answer to DELETE %s is not the summary of session %s (its id is %s)", path, id, orUnknown(summary.ID))
	}
	return summary, nil
}

// logFile is the file kakapo writes its output to, in the temporary directory, and a handle to read
// it. Where the system allows it, the file is removed as soon as kakapo has it open: nothing is
// left behind, even by a test binary that ends without stopping kakapo.
type logFile struct {
	path   string
	writer *os.File // kakapo's, closed here once it is started
	reader *os.File
	mu     sync.Mutex
	gone   bool // removed from its folder
}

func newLogFile() (*logFile, error) {
	writer, err := os.CreateTemp("", "kakapotest-*.log")
	if err != nil {
		return nil, err
	}
	reader, err := os.Open(writer.Name())
	if err != nil {
		writer.Close()
		os.Remove(writer.Name())
		return nil, err
	}
	return &logFile{path: writer.Name(), writer: writer, reader: reader}, nil
}

// started closes this process's handle for writing, and removes the file from its folder when the
// system allows that while it is open.
func (l *logFile) started() {
	l.writer.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if os.Remove(l.path) == nil {
		l.gone = true
	}
}

func (l *logFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reader.Close()
	if !l.gone {
		os.Remove(l.path)
		l.gone = true
	}
}

// last is the last n lines kakapo wrote (of its last 64 KiB).
func (l *logFile) last(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	info, err := l.reader.Stat()
	if err != nil {
		return "(its output cannot be read: " + err.Error() + ")"
	}
	size := info.Size()
	start := size - maxLine
	if start < 0 {
		start = 0
	}
	buffer := make([]byte, size-start)
	read, _ := l.reader.ReadAt(buffer, start)
	text := strings.TrimRight(string(buffer[:read]), "\n")
	lines := strings.Split(text, "\n")
	if start > 0 && len(lines) > 1 {
		lines = lines[1:] // the first one is cut
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
