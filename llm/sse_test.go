package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func readAll(t testing.TB, s string) []SSEEvent {
	r := NewSSEReader(strings.NewReader(s))
	var out []SSEEvent
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		name, in string
		want     []SSEEvent
	}{
		{"plain", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []SSEEvent{{Data: []byte(`{"a":1}`)}, {Data: []byte("[DONE]")}}},
		{"crlf and event", "event: ping\r\ndata: {}\r\n\r\n", []SSEEvent{{Event: "ping", Data: []byte("{}")}}},
		{"comment skipped", ": keep-alive\n\ndata: x\n\n", []SSEEvent{{Data: []byte("x")}}},
		{"multi-line data", "data: a\ndata: b\n\n", []SSEEvent{{Data: []byte("a\nb")}}},
		{"no space after colon", "data:x\n\n", []SSEEvent{{Data: []byte("x")}}},
		{"last event without blank line", "data: x\n\ndata: y", []SSEEvent{{Data: []byte("x")}, {Data: []byte("y")}}},
		{"trailing spaces kept", "data: {\"a\":1}   \n\n", []SSEEvent{{Data: []byte(`{"a":1}   `)}}},
		{"event then error", "event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n", []SSEEvent{{Event: "error", Data: []byte(`{"error":{"message":"boom"}}`)}}},
		{"blank lines only", "\n\n\n", nil},
	}
	for _, c := range cases {
		got := readAll(t, c.in)
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d events, want %d: %q", c.name, len(got), len(c.want), got)
		}
		for i := range got {
			if got[i].Event != c.want[i].Event || !bytes.Equal(got[i].Data, c.want[i].Data) {
				t.Errorf("%s: event %d = %q/%q, want %q/%q", c.name, i, got[i].Event, got[i].Data, c.want[i].Event, c.want[i].Data)
			}
		}
	}
	long := "data: " + strings.Repeat("x", 200_000) + "\n\n"
	if got := readAll(t, long); len(got) != 1 || len(got[0].Data) != 200_000 {
		t.Fatal("a long line must be read whole")
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add("data: {}\n\n")
	f.Add("event: message_start\ndata: {\"type\":\"message_start\"}\n\n: ping\n")
	f.Add("data: [DONE]")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewSSEReader(strings.NewReader(in))
		for i := 0; ; i++ {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > len(in) {
				t.Fatal("data longer than the input")
			}
			if i > len(in)+1 {
				t.Fatal("more events than input bytes: the reader does not advance")
			}
		}
	})
}

func TestTransportRetries429And5xxHonouringRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"slow down"}}`)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
		default:
			io.WriteString(w, "data: ok\n\n")
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	tr := &Transport{BaseDelay: 100 * time.Millisecond, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	resp, err := tr.PostJSON(context.Background(), srv.URL, nil, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if calls.Load() != 3 || len(waits) != 2 || waits[0] != 3*time.Second || waits[1] != 200*time.Millisecond {
		t.Fatalf("calls %d waits %v", calls.Load(), waits)
	}
}

func TestTransportDoesNotRetryClientErrors(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided"}}`)
	}))
	defer srv.Close()
	_, err := (&Transport{Sleep: func(context.Context, time.Duration) error { return nil }}).PostJSON(context.Background(), srv.URL, nil, []byte(`{}`))
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 || he.Message != "Incorrect API key provided" || calls.Load() != 1 {
		t.Fatalf("err %v calls %d", err, calls.Load())
	}
	_, err = (&Transport{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}).PostJSON(context.Background(), "http://127.0.0.1:1/", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Fatalf("an unreachable provider: %v", err)
	}
}

func TestErrorMessage(t *testing.T) {
	for in, want := range map[string]string{
		`{"error":{"message":"m1","type":"x"}}`: "m1",
		`{"error":"m2"}`:                        "m2",
		`{"message":"m3"}`:                      "m3",
		"<html>\n  Bad   gateway </html>":       "<html> Bad gateway </html>",
		"":                                      "(empty body)",
	} {
		if got := ErrorMessage([]byte(in)); got != want {
			t.Errorf("ErrorMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// Errors that cannot get better are not retried: a host name that does not
// exist, a malformed address, a certificate that does not verify, 501; a
// 503 is, and each retry is announced once.
func TestTransportRetriesOnlyWhatCanGetBetter(t *testing.T) {
	var dials atomic.Int32
	noSuchHost := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return nil, &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}
	}}}
	var notices []RetryNotice
	tr := &Transport{Client: noSuchHost, Sleep: func(context.Context, time.Duration) error { return nil }, OnRetry: func(n RetryNotice) { notices = append(notices, n) }}
	if _, err := tr.PostJSON(context.Background(), "http://api.example.invalid/v1/chat/completions", nil, nil); err == nil || dials.Load() != 1 || len(notices) != 0 {
		t.Fatalf("no such host: err %v after %d dials, %d notices; want one try", err, dials.Load(), len(notices))
	}
	if _, err := tr.PostJSON(context.Background(), "ftp://127.0.0.1/x", nil, nil); err == nil || len(notices) != 0 {
		t.Fatalf("an unsupported scheme: %v, %d notices", err, len(notices))
	}
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	tr.Client = nil // the default client does not trust the test certificate
	if _, err := tr.PostJSON(context.Background(), tlsSrv.URL, nil, nil); err == nil || len(notices) != 0 {
		t.Fatalf("an untrusted certificate: %v, %d notices", err, len(notices))
	}
	var calls atomic.Int32
	status := http.StatusNotImplemented
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	if _, err := tr.PostJSON(context.Background(), srv.URL, nil, nil); err == nil || calls.Load() != 1 || len(notices) != 0 {
		t.Fatalf("501: %v after %d calls", err, calls.Load())
	}
	status = http.StatusServiceUnavailable
	calls.Store(0)
	if _, err := tr.PostJSON(context.Background(), srv.URL, nil, nil); err == nil || calls.Load() != 4 || len(notices) != 3 {
		t.Fatalf("503: %v after %d calls, %d notices", err, calls.Load(), len(notices))
	}
	if got := notices[0].String(); !strings.HasPrefix(got, "retrying (2/4) after 1s: provider answered HTTP 503") || notices[2].Attempt != 4 || notices[2].Wait != 4*time.Second {
		t.Fatalf("notices %q, %+v", got, notices[2])
	}
}
