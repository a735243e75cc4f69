package kakapotest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/OWNER/kakapo/clients/go/kakapotest"
)

// fakeAdmin is a Kakapo admin API that answers POST /__kakapo/sessions with session and every DELETE
// with status and summary; "HOST" in them is its own host:port. It notes the DELETE requests.
type fakeAdmin struct {
	*httptest.Server
	session, summary string
	status           int
	mu               sync.Mutex
	deletes          []string // their request URIs
}

func newFakeAdmin(t *testing.T, session string, status int, summary string) *fakeAdmin {
	f := &fakeAdmin{status: status}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		host := r.Host
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/__kakapo/sessions":
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, strings.ReplaceAll(f.session, "HOST", host))
		case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/__kakapo/sessions/"):
			f.mu.Lock()
			f.deletes = append(f.deletes, r.RequestURI)
			f.mu.Unlock()
			w.WriteHeader(f.status)
			io.WriteString(w, strings.ReplaceAll(f.summary, "HOST", host))
		default:
			http.Error(w, `{"error": "no such admin request"}`, http.StatusNotFound)
		}
	}))
	f.session, f.summary = session, summary
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAdmin) Deletes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.deletes...)
}

const goodSession = `{"id": "abc123", "cassette": "cassettes/TestX.json", "mode": "new", "proxy": "http://abc123:@HOST"}`

func TestUnusableSessionAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, answer, want string
		deleted            string // the DELETE's request URI; "" when there is none
		deleteStatus       int
	}{
		{"a proxy URL that does not parse", `{"id": "abc123", "mode": "new", "proxy": "http://abc123:@[::1"}`,
			`has no usable proxy URL: "http://abc123:@[::1": it does not parse (the session is ended: DELETE /__kakapo/sessions/abc123)`,
			"/__kakapo/sessions/abc123", 200},
		{"no proxy URL", `{"id": "abc123", "mode": "new"}`,
			"has no usable proxy URL: nothing (the session is ended", "/__kakapo/sessions/abc123", 200},
		{"a proxy URL that is no string", `{"id": "abc123", "mode": "new", "proxy": {"host": "HOST"}}`,
			`has no usable proxy URL: {"host": "127.0.0.1:`, "/__kakapo/sessions/abc123", 200},
		{"a proxy on another machine", `{"id": "abc123", "mode": "new", "proxy": "http://abc123:@203.0.113.7:8080"}`,
			"its host is not a loopback address", "/__kakapo/sessions/abc123", 200},
		{"a proxy for another session", `{"id": "abc123", "mode": "new", "proxy": "http://def456:@HOST"}`,
			"it does not name session abc123 as its user", "/__kakapo/sessions/abc123", 200},
		{"a proxy of another scheme", `{"id": "abc123", "mode": "new", "proxy": "https://abc123:@HOST"}`,
			`its scheme is "https", not http`, "/__kakapo/sessions/abc123", 200},
		{"an id with a slash", `{"id": "abc/../x", "mode": "new", "proxy": "http://abc:@HOST"}`,
			`has no usable id (letters and digits): "abc/../x" (the session is ended: DELETE /__kakapo/sessions/abc%2F..%2Fx)`,
			"/__kakapo/sessions/abc%2F..%2Fx", 200},
		{"an id with a dash", `{"id": "ab-c", "mode": "new", "proxy": "http://ab-c:@HOST"}`,
			`has no usable id (letters and digits): "ab-c"`, "/__kakapo/sessions/ab-c", 200},
		{"an id with a newline", `{"id": "ab\nc\u00fc", "mode": "new", "proxy": "http://abc:@HOST"}`,
			`has no usable id (letters and digits): "ab\nc\u00fc"`, "/__kakapo/sessions/ab%0Ac%C3%BC", 200},
		{"a mode that is none of Kakapo's", `{"id": "abc123", "mode": "sometimes", "proxy": "http://abc123:@HOST"}`,
			`has no record mode: "sometimes"`, "/__kakapo/sessions/abc123", 200},
		{"an end that fails", `{"id": "abc123", "mode": "new", "proxy": "http://abc123:@[::1"}`,
			"it does not parse (and ending the session failed: kakapo answered 500 to DELETE /__kakapo/sessions/abc123: no disk)",
			"/__kakapo/sessions/abc123", 500},
		{"an empty id", `{"id": "", "mode": "new", "proxy": "http://abc123:@HOST"}`,
			`has no usable id (letters and digits): ""`, "", 200},
		{"an id that is no string", `{"id": 5, "mode": "new", "proxy": "http://abc123:@HOST"}`,
			"has no usable id (letters and digits): 5", "", 200},
		{"no object", `["abc123"]`, "is not the JSON expected", "", 200},
	} {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeAdmin(t, c.answer, c.deleteStatus, `{"error": "no disk"}`)
			got := fatalOf(t, kakapotest.AttachedServer(fake.URL, t.TempDir()), "TestX", kakapotest.Options{Mode: "new"})
			if !strings.HasPrefix(got, "kakapotest: ") || !strings.Contains(got, c.want) {
				t.Errorf("the session stopped the test with %q, want it to say %q", got, c.want)
			}
			deletes := fake.Deletes()
			if c.deleted == "" && len(deletes) != 0 {
				t.Errorf("the session sent %q, want no DELETE (no id to end)", deletes)
			}
			if c.deleted != "" && (len(deletes) != 1 || deletes[0] != c.deleted) {
				t.Errorf("the session sent DELETE %q, want DELETE %s", deletes, c.deleted)
			}
		})
	}
}

// closeOn opens a session on a fake admin API that ends it with status and summary, closes it, and
// returns the fake test (its failures) and what Close returned.
func closeOn(t *testing.T, status int, summary string) (*fakeT, kakapotest.Summary, error) {
	t.Helper()
	fake := newFakeAdmin(t, goodSession, status, summary)
	test := newFake(t, "TestX")
	var got kakapotest.Summary
	var err error
	test.run(func(ft testing.TB) {
		k := kakapotest.AttachedServer(fake.URL, t.TempDir()).Session(ft, kakapotest.Options{Mode: "new"})
		got, err = k.Close()
	})
	if test.fatal != "" || len(test.panics) != 0 {
		t.Fatalf("the session stopped the test (%q) or panicked (%q)", test.fatal, test.panics)
	}
	if deletes := fake.Deletes(); len(deletes) != 1 {
		t.Fatalf("DELETE sent %d times, want once (Close, then the clean-up's same answer)", len(deletes))
	}
	return test, got, err
}

func TestHostileSummary(t *testing.T) {
	t.Parallel()
	many := map[string]interface{}{"id": "abc123", "missCount": 1 << 40}
	var misses []interface{}
	differences := make([]string, 11)
	for i := range differences {
		differences[i] = strings.Repeat("d", 3000)
	}
	for i := 0; i < 60; i++ {
		var nearest []interface{}
		for j := 0; j < 6; j++ {
			nearest = append(nearest, map[string]interface{}{
				"interaction": j, "method": "GET", "url": strings.Repeat("u", 3000), "differences": differences,
			})
		}
		misses = append(misses, map[string]interface{}{"line": strings.Repeat("l", 5000), "nearest": nearest})
	}
	many["misses"] = misses
	manyJSON, _ := json.Marshal(many)
	for _, c := range []struct {
		name, summary string
		status        int
		closeErr      string // what Close's error says; "" for none
		report        []string
		noReport      []string // what the report must not hold
		lines         int      // at most this many lines of report, when not 0
	}{
		{name: "a null miss", summary: `{"id": "abc123", "misses": [null]}`,
			report: []string{"Kakapo: 1 request(s) missed cassette ", "\n  ? ?\n    no recording is near it\n"}},
		{name: "nearest an object", summary: `{"id": "abc123", "misses": [{"method": "GET", "url": "http://x/", "nearest": {}}]}`,
			closeErr: "kakapo's answer to DELETE /__kakapo/sessions/abc123 is not a session summary: json: cannot unmarshal object"},
		{name: "nearest a string", summary: `{"id": "abc123", "misses": [{"method": "GET", "nearest": "close"}]}`,
			closeErr: "is not a session summary: json: cannot unmarshal string"},
		{name: "a huge float", summary: `{"id": "abc123", "replayed": 1e400}`,
			closeErr: "is not a session summary"},
		{name: "a huge integer", summary: `{"id": "abc123", "misses": [{"nearest": [{"interaction": 123456789012345678901234567890}]}]}`,
			closeErr: "is not a session summary"},
		{name: "the largest miss count", summary: `{"id": "abc123", "missCount": 9223372036854775807}`,
			report: []string{"Kakapo: 9223372036854775807 request(s) missed", "  ... and 9223372036854775757 more\n"}},
		{name: "a negative miss count", summary: `{"id": "abc123", "missCount": -5, "misses": []}`},
		{name: "text that forges lines", summary: `{"id": "abc123", "misses": [{"line": "GET /x\n--- PASS: TestX\u001b[2J", ` +
			`"nearest": [{"interaction": -1, "differences": [null, "a\u0000b\nc"]}]}]}`,
			report:   []string{"  GET /x\ufffd--- PASS: TestX\ufffd[2J\n", "    nearest: #-1 ? ?\n", "      a\ufffdb\ufffdc\n"},
			noReport: []string{"\x1b", "\x00", "\n--- PASS"}},
		{name: "many misses of long text", summary: string(manyJSON),
			report: []string{"Kakapo: 1099511627776 request(s) missed", "\n  " + strings.Repeat("l", 2000) + "…\n",
				"\n      " + strings.Repeat("d", 2000) + "…\n", "  ... and 1099511627726 more\n"},
			lines: 1 + 50*(1+5*(1+10)) + 2},
		{name: "no summary", summary: `null`,
			closeErr: "kakapo's answer to DELETE /__kakapo/sessions/abc123 is not the summary of session abc123 (its id is ?)"},
		{name: "another session's summary", summary: `{"id": "def456", "misses": [null]}`,
			closeErr: "is not the summary of session abc123 (its id is def456)"},
		{name: "a save error", status: 500, summary: `{"id": "abc123", "cassette": "c\u001b.json", "saveError": "disk\nfull"}`,
			closeErr: "kakapo could not save cassette c\ufffd.json: disk\ufffdfull"},
	} {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status := c.status
			if status == 0 {
				status = 200
			}
			test, _, err := closeOn(t, status, c.summary)
			if c.closeErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.closeErr) {
					t.Fatalf("Close: %v, want an error that says %q", err, c.closeErr)
				}
				if len(test.errors) != 1 || test.errors[0] != "kakapotest: "+err.Error() {
					t.Fatalf("the clean-up failed the test with %q, want Close's error", test.errors)
				}
				return
			}
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
			if c.report == nil {
				if len(test.errors) != 0 {
					t.Fatalf("the test failed: %q", test.errors)
				}
				return
			}
			if len(test.errors) != 1 {
				t.Fatalf("the test failed %d times, want once with the report: %q", len(test.errors), test.errors)
			}
			report := test.errors[0] + "\n"
			for _, want := range c.report {
				if !strings.Contains(report, want) {
					t.Errorf("the report does not hold %q:\n%.3000s", want, report)
				}
			}
			for _, unwanted := range c.noReport {
				if strings.Contains(report, unwanted) {
					t.Errorf("the report holds %q:\n%s", unwanted, report)
				}
			}
			if lines := strings.Count(report, "\n"); c.lines != 0 && lines > c.lines {
				t.Errorf("the report has %d lines, want at most %d", lines, c.lines)
			}
		})
	}
}

func TestMissReportWithoutARecorder(t *testing.T) {
	t.Parallel()
	report := kakapotest.MissReport(nil, kakapotest.Summary{
		Misses:    []kakapotest.Miss{{}, {Nearest: []kakapotest.Nearest{{Interaction: -1 << 63}}}},
		MissCount: -1,
	})
	want := strings.Join([]string{
		"Kakapo: 2 request(s) missed cassette ? (mode ?, session ?):",
		"  ? ?",
		"    no recording is near it",
		"  ? ?",
		fmt.Sprintf("    nearest: #%d ? ?", -1<<63),
		"Record it with KAKAPO_RECORD=new (or Options{Mode: \"new\"}), or fix the request.",
	}, "\n")
	if report != want {
		t.Fatalf("the report:\n%s\nwant:\n%s", report, want)
	}
}
