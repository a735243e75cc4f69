// Package kakapotest gives every Go test its own Kakapo cassette session.
//
// One `kakapo serve --proxy --cassette-dir DIR --port 0` runs per test binary (per package), started
// by the first test that asks for a session. Session opens a session on the test's own cassette,
// cassettes/<test name>.json under DIR (the package's folder, where go test runs), and returns an
// *http.Client whose requests go through it: they are recorded or replayed according to the record
// mode (KAKAPO_RECORD, default once). The session ends when the test ends (t.Cleanup); a request
// that matched no recording fails the test with Kakapo's report.
//
//	func TestMain(m *testing.M) { kakapotest.Main(m) }
//
//	func TestGetUser(t *testing.T) {
//		k := kakapotest.Session(t)
//		resp, err := k.Client.Get("https://api.example.com/users/1")
//		...
//	}
//
// Child processes (curl, a CLI under test) join the session with Env:
// cmd.Env = append(os.Environ(), k.Env...).
package kakapotest

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// Modes are the record modes Kakapo knows. once replays when the cassette exists and records
// everything otherwise; none replays only; new replays what it has and records the rest; all
// records everything again; passthrough forwards without recording or replaying.
var Modes = []string{"none", "new", "all", "once", "passthrough"}

// SessionHeader names a session on a request sent to Kakapo's own URL (see Recorder.Header).
const SessionHeader = "X-Kakapo-Session"

// Options changes one test's session. The zero value is what a test gets without any.
type Options struct {
	// Mode is the record mode of this session, one of Modes. Default: $KAKAPO_RECORD, else once.
	// A Mode given here wins over KAKAPO_RECORD.
	Mode string
	// Cassette is the cassette's path relative to the cassettes/ folder (e.g. "users/get.json"),
	// instead of the test's own name. It may not be absolute nor leave that folder.
	Cassette string
	// Lenient keeps a miss (a request no recording matched) from failing the test; the report is
	// logged instead. Sessions are strict by default.
	Lenient bool
	// Binary is the kakapo executable, used when this session is the one that starts the server
	// (the first of the test binary). Default: ServerOptions.Binary, then $KAKAPO_BIN, then kakapo
	// on PATH.
	Binary string
	// Match replaces the server's matching rules for this session.
	Match *Match
	// Store is "own" (the routes files' resources seeded afresh for this session alone) or
	// "shared" (the server's Store, the default).
	Store string
}

// Match is how a session's requests are matched to recordings; each member replaces the server's
// default for this session.
type Match struct {
	IgnoreQuery      []string `json:"ignoreQuery,omitempty"`      // query parameter names
	IgnoreBodyFields []string `json:"ignoreBodyFields,omitempty"` // JSON pointers such as /user/id
	Headers          []string `json:"headers,omitempty"`          // header names that must match too
}

// Recorder is one test's cassette session, what Session returns (a type cannot share the
// function's name).
type Recorder struct {
	// ID is the session's id, as Kakapo knows it.
	ID string
	// Cassette is the cassette file's path on disk.
	Cassette string
	// Mode is the mode Kakapo chose (once becomes none or new).
	Mode string
	// Strict says whether a miss fails the test (not Options.Lenient).
	Strict bool
	// Client sends its requests through the session: HTTP as proxy requests, HTTPS through
	// CONNECT tunnels Kakapo decrypts. It trusts the system's CAs and Kakapo's.
	Client *http.Client
	// ProxyURL names the session as a proxy: http://ID:@127.0.0.1:PORT.
	ProxyURL string
	// URL is Kakapo's own address, for clients pointed at Kakapo directly (a server started with
	// --upstream, see ServerOptions.Args); send Header with every request.
	URL string
	// Header names the session on requests sent to URL (X-Kakapo-Session: ID).
	Header http.Header
	// Env are the environment variables that put a child process in the session:
	// HTTP_PROXY, HTTPS_PROXY (both cases) on ProxyURL, ALL_PROXY and NO_PROXY emptied, and
	// SSL_CERT_FILE, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE on CABundle.
	// Use cmd.Env = append(os.Environ(), s.Env...).
	Env []string
	// CABundle is a PEM file of the system's CAs and Kakapo's, which clients of the session trust.
	CABundle string

	run       *running
	transport *http.Transport
	once      sync.Once
	summary   Summary
	err       error
}

// Summary is what Kakapo says when a session ends.
type Summary struct {
	ID        string   `json:"id"`
	Cassette  string   `json:"cassette"` // relative to the server's cassette folder
	Mode      string   `json:"mode"`
	Strict    bool     `json:"strict"`
	Replayed  int      `json:"replayed"`
	Recorded  int      `json:"recorded"`
	Misses    []Miss   `json:"misses"`    // the first 100
	MissCount int      `json:"missCount"` // set when there were more than listed
	Unused    []Unused `json:"unused"`    // recordings the session never replayed
	Warning   string   `json:"warning,omitempty"`
	SaveError string   `json:"saveError,omitempty"`
}

// Miss is a request no recording matched, with the nearest recordings and how they differ.
type Miss struct {
	Method  string    `json:"method"`
	URL     string    `json:"url"`
	Line    string    `json:"line"`
	Nearest []Nearest `json:"nearest"`
}

// Nearest is a recording close to a missed request.
type Nearest struct {
	Interaction int      `json:"interaction"`
	Method      string   `json:"method"`
	URL         string   `json:"url"`
	Differences []string `json:"differences"`
}

// Unused is a recording of the cassette the session never replayed.
type Unused struct {
	Interaction int    `json:"interaction"`
	Method      string `json:"method"`
	URL         string `json:"url"`
	Label       string `json:"label,omitempty"`
}

// Session opens a cassette session for t on the test binary's shared Kakapo server (started now if
// it is not running yet) and ends it when t ends. See Server.Session.
func Session(t testing.TB, opts ...Options) *Recorder {
	t.Helper()
	return defaultServer().Session(t, opts...)
}

// Session opens a cassette session for t on this server: the cassette is
// cassettes/<t.Name()>.json under the server's folder (each part of a subtest's name a folder, made
// file-safe), or Options.Cassette. It stops t (t.Fatalf) when the session cannot open. When t
// ends, the session ends and its cassette is saved; a miss in a strict session fails t with
// Kakapo's report (t.Errorf), and recordings it never used are logged.
func (s *Server) Session(t testing.TB, opts ...Options) *Recorder {
	t.Helper()
	if len(opts) > 1 {
		t.Fatalf("kakapotest.Session takes at most one Options, not %d", len(opts))
	}
	var o Options
	if len(opts) == 1 {
		o = opts[0]
	}
	envMode, err := recordMode()
	if err != nil {
		t.Fatalf("kakapotest: %v", err)
	}
	mode := envMode
	if o.Mode != "" {
		if !validMode(o.Mode) {
			t.Fatalf("kakapotest: Options{Mode: %q}: not a record mode; it is one of %s", o.Mode, strings.Join(Modes, ", "))
		}
		mode = o.Mode
	}
	if o.Store != "" && o.Store != "own" && o.Store != "shared" {
		t.Fatalf("kakapotest: Options{Store: %q}: it is own or shared", o.Store)
	}
	relative, err := cassetteFor(t.Name(), o.Cassette)
	if err != nil {
		t.Fatalf("kakapotest: %v", err)
	}
	run, err := s.ensureStarted(o.Binary)
	if err != nil {
		t.Fatalf("kakapotest: %v", err)
	}
	file := filepath.Join(run.dir, filepath.FromSlash(relative))
	if mode == "none" && !recorded(file) {
		t.Fatalf("kakapotest: mode none replays only, and cassette %s does not exist: record it first "+
			"(KAKAPO_RECORD=once, or Options{Mode: \"once\"})", file)
	}
	body := map[string]interface{}{"cassette": relative, "mode": mode, "strict": !o.Lenient}
	if o.Match != nil {
		body["match"] = o.Match
	}
	if o.Store != "" {
		body["store"] = o.Store
	}
	// Every member is read on its own: an answer that names the session but is unusable otherwise
	// still lets the session be ended below.
	var answer map[string]json.RawMessage
	if err := run.call("POST", "/__kakapo/sessions", body, &answer); err != nil {
		t.Fatalf("kakapotest: %v", err)
	}
	id, _ := jsonString(answer["id"])
	session, err := newSession(run, file, o, answer)
	if err != nil {
		// The session may be open: end it, so its cassette is not held until the server's timeout.
		if id != "" && len(id) <= maxText {
			path := "/__kakapo/sessions/" + url.PathEscape(id)
			if deleteErr := run.call("DELETE", path, nil, nil); deleteErr != nil {
				err = fmt.Errorf("%v (and ending the session failed: %v)", err, deleteErr)
			} else {
				err = fmt.Errorf("%v (the session is ended: DELETE %s)", err, clip(path))
			}
		}
		t.Fatalf("kakapotest: %v", err)
	}
	t.Cleanup(func() {
		t.Helper()
		session.finish(t)
	})
	return session
}

// recorded says whether the cassette file is there, or its journal: what a kakapo that could not
// save recorded (it was killed), which Kakapo folds into the cassette when a session opens it.
func recorded(file string) bool {
	for _, candidate := range []string{file, file + ".journal"} {
		if info, err := os.Stat(candidate); err == nil && !info.IsDir() {
			return true
		}
	}
	return false
}

// sessionID is what a session's id is made of (Kakapo's are 16 hexadecimal digits).
var sessionID = regexp.MustCompile(`^[0-9A-Za-z]{1,128}$`)

// newSession is the Recorder of the session Kakapo opened, from its answer to POST /__kakapo/sessions,
// or an error that says what in the answer is unusable.
func newSession(run *running, file string, o Options, answer map[string]json.RawMessage) (*Recorder, error) {
	const what = "kakapo's answer to POST /__kakapo/sessions"
	id, ok := jsonString(answer["id"])
	if !ok || !sessionID.MatchString(id) {
		return nil, fmt.Errorf("%s has no usable id (letters and digits): %s", what, quoted(answer["id"]))
	}
	mode, ok := jsonString(answer["mode"])
	if !ok || !validMode(mode) {
		return nil, fmt.Errorf("%s has no record mode: %s", what, quoted(answer["mode"]))
	}
	proxy, ok := jsonString(answer["proxy"])
	if !ok {
		return nil, fmt.Errorf("%s has no usable proxy URL: %s", what, quoted(answer["proxy"]))
	}
	proxyURL, err := sessionProxy(proxy, id)
	if err != nil {
		return nil, fmt.Errorf("%s has no usable proxy URL: %s: %v", what, quoted(answer["proxy"]), err)
	}
	transport := newTransport()
	transport.Proxy = http.ProxyURL(proxyURL)
	transport.TLSClientConfig = &tls.Config{RootCAs: run.roots}
	session := &Recorder{
		ID:        id,
		Cassette:  file,
		Mode:      mode,
		Strict:    !o.Lenient,
		Client:    &http.Client{Transport: transport},
		ProxyURL:  proxy,
		URL:       run.url,
		Header:    http.Header{SessionHeader: []string{id}},
		CABundle:  run.bundle,
		run:       run,
		transport: transport,
	}
	for _, name := range proxyVariables {
		session.Env = append(session.Env, name+"="+proxy)
	}
	for _, name := range []string{"ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"} {
		session.Env = append(session.Env, name+"=")
	}
	for _, name := range []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"} {
		session.Env = append(session.Env, name+"="+run.bundle)
	}
	return session, nil
}

// sessionProxy is proxy parsed, when it is a proxy URL that names session id on this machine:
// http://ID:@127.0.0.1:PORT, or http://USER+ID@127.0.0.1:PORT with the forward proxy's credentials.
func sessionProxy(proxy, id string) (*url.URL, error) {
	parsed, err := url.Parse(proxy)
	if err != nil {
		return nil, errors.New("it does not parse")
	}
	if parsed.Scheme != "http" {
		return nil, fmt.Errorf("its scheme is %q, not http", clip(parsed.Scheme))
	}
	if parsed.User == nil || (parsed.User.Username() != id && !strings.HasSuffix(parsed.User.Username(), "+"+id)) {
		return nil, fmt.Errorf("it does not name session %s as its user", id)
	}
	if ip := net.ParseIP(parsed.Hostname()); ip == nil || !ip.IsLoopback() {
		return nil, errors.New("its host is not a loopback address")
	}
	if port, err := strconv.Atoi(parsed.Port()); err != nil || port < 1 || port > 65535 {
		return nil, errors.New("it has no port")
	}
	if (parsed.Path != "" && parsed.Path != "/") || parsed.RawQuery != "" || parsed.Fragment != "" || parsed.Opaque != "" {
		return nil, errors.New("it has more than a scheme, a user, a host and a port")
	}
	return parsed, nil
}

// jsonString is raw as a string, when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var text string
	if len(raw) == 0 || json.Unmarshal(raw, &text) != nil {
		return "", false
	}
	return text, true
}

// quoted is a JSON value of an answer for an error message: cut to a sensible length, or "nothing".
func quoted(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return clip(string(raw))
}

// maxText is the longest text of Kakapo's answers (a URL, a difference...) a report quotes.
const maxText = 2000

// clip is text from Kakapo made safe to print in a report: control characters (a newline that would
// forge a line, a terminal's escapes) become U+FFFD, and text longer than maxText bytes is cut.
func clip(text string) string {
	if len(text) > maxText {
		cut := maxText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(text, string(utf8.RuneError)))
}

// newTransport is a copy of http.DefaultTransport's settings (a fresh one when a program replaced
// it by another kind of RoundTripper).
func newTransport() *http.Transport {
	if base, ok := http.DefaultTransport.(*http.Transport); ok {
		return base.Clone()
	}
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Close ends the session: Kakapo waits for its requests in flight, saves the cassette and answers
// what the session did. Only the first call asks Kakapo; later ones (and the test's clean-up) get
// the same answer. Close does not fail the test: the clean-up does, on a miss in a strict session.
func (s *Recorder) Close() (Summary, error) {
	s.once.Do(func() {
		s.summary, s.err = s.run.endSession(s.ID)
		s.transport.CloseIdleConnections()
	})
	return s.summary, s.err
}

// finish is the test's clean-up: it ends the session and reports what the test should know.
func (s *Recorder) finish(t testing.TB) {
	t.Helper()
	summary, err := s.Close()
	if err != nil {
		t.Errorf("kakapotest: %v", err)
		return
	}
	if len(summary.Misses) > 0 || summary.MissCount > 0 {
		if s.Strict {
			t.Errorf("%s", MissReport(s, summary))
		} else {
			t.Logf("%s", MissReport(s, summary))
		}
	}
	if len(summary.Unused) > 0 {
		t.Logf("%s", unusedReport(s, summary))
	}
	if summary.Warning != "" {
		t.Logf("kakapo: %s", clip(summary.Warning))
	}
}

// MissReport is the text a strict session fails its test with: each request that missed, the
// nearest recordings and how they differ. Kakapo's text is quoted cut to a sensible length, with its
// control characters replaced.
func MissReport(s *Recorder, summary Summary) string {
	count := len(summary.Misses)
	if summary.MissCount > count {
		count = summary.MissCount
	}
	cassette, mode, id := reportNames(s, summary)
	lines := []string{fmt.Sprintf("Kakapo: %d request(s) missed cassette %s (mode %s, session %s):", count, cassette, mode, id)}
	for i, miss := range summary.Misses {
		if i == 50 {
			break
		}
		line := clip(miss.Line)
		if line == "" {
			line = orUnknown(miss.Method) + " " + orUnknown(miss.URL)
		}
		lines = append(lines, "  "+line)
		if len(miss.Nearest) == 0 {
			lines = append(lines, "    no recording is near it")
		}
		for j, near := range miss.Nearest {
			if j == 5 {
				break
			}
			lines = append(lines, fmt.Sprintf("    nearest: #%d %s %s", near.Interaction, orUnknown(near.Method), orUnknown(near.URL)))
			for k, difference := range near.Differences {
				if k == 10 {
					break
				}
				lines = append(lines, "      "+clip(difference))
			}
		}
	}
	if count > 50 {
		lines = append(lines, fmt.Sprintf("  ... and %d more", count-50))
	}
	lines = append(lines, "Record it with KAKAPO_RECORD=new (or Options{Mode: \"new\"}), or fix the request.")
	return strings.Join(lines, "\n")
}

// reportNames are the cassette, mode and session id a report names: the summary's, else the
// session's (s may be nil).
func reportNames(s *Recorder, summary Summary) (cassette, mode, id string) {
	cassette, mode, id = summary.Cassette, summary.Mode, summary.ID
	if s != nil {
		if cassette == "" {
			cassette = s.Cassette
		}
		if mode == "" {
			mode = s.Mode
		}
		id = s.ID
	}
	return orUnknown(cassette), orUnknown(mode), orUnknown(id)
}

func unusedReport(s *Recorder, summary Summary) string {
	cassette, _, _ := reportNames(s, summary)
	lines := []string{fmt.Sprintf("kakapo: recordings of cassette %s this test never used:", cassette)}
	for i, unused := range summary.Unused {
		if i == 100 {
			lines = append(lines, fmt.Sprintf("  ... and %d more", len(summary.Unused)-100))
			break
		}
		line := fmt.Sprintf("  unused: #%d %s %s", unused.Interaction, orUnknown(unused.Method), orUnknown(unused.URL))
		if unused.Label != "" {
			line += " " + clip(unused.Label)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// orUnknown is text made safe to print (see clip), or "?" for none.
func orUnknown(text string) string {
	if text == "" {
		return "?"
	}
	return clip(text)
}

func validMode(mode string) bool {
	for _, known := range Modes {
		if mode == known {
			return true
		}
	}
	return false
}

// recordMode is $KAKAPO_RECORD, else once; an error names a value that is no mode.
func recordMode() (string, error) {
	mode := os.Getenv("KAKAPO_RECORD")
	if mode == "" {
		return "once", nil
	}
	if !validMode(mode) {
		return "", fmt.Errorf("KAKAPO_RECORD=%s: not a record mode; it is one of %s", mode, strings.Join(Modes, ", "))
	}
	return mode, nil
}

// cassetteFor is the cassette's path relative to the server's folder, with slashes: the given one
// under cassettes/, else the test's name made file-safe.
func cassetteFor(testName, given string) (string, error) {
	if given == "" {
		return "cassettes/" + CassetteName(testName), nil
	}
	slashed := filepath.ToSlash(given)
	clean := path.Clean(slashed)
	if filepath.IsAbs(given) || path.IsAbs(slashed) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("Options{Cassette: %q}: a cassette is a path inside the cassettes/ folder", given)
	}
	return "cassettes/" + clean, nil
}

// decodeJSON decodes a JSON answer into out (when out is not nil).
func decodeJSON(raw []byte, out interface{}) error {
	if out == nil || len(strings.TrimSpace(string(raw))) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}
