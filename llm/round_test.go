package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPostRound(t *testing.T) {
	tests := []struct {
		name       string
		status     []int // per request; the last repeats
		ctype      string
		retry      bool
		buildErr   bool
		want       string
		wantPosts  int32
		wantBuilds int
		wantErr    string
	}{
		{name: "stream", status: []int{200}, ctype: "text/event-stream", want: "stream:ok", wantPosts: 1, wantBuilds: 1},
		{name: "whole JSON answer", status: []int{200}, ctype: "application/json; charset=utf-8", want: "whole:ok", wantPosts: 1, wantBuilds: 1},
		{name: "+json answer", status: []int{200}, ctype: "application/problem+json", want: "whole:ok", wantPosts: 1, wantBuilds: 1},
		{name: "refusal retried once with a new body", status: []int{400, 200}, ctype: "text/event-stream", retry: true, want: "stream:ok", wantPosts: 2, wantBuilds: 2},
		{name: "refusal not worth a retry", status: []int{400}, ctype: "text/event-stream", wantPosts: 1, wantBuilds: 1, wantErr: "HTTP 400"},
		{name: "retried refusal refused again", status: []int{400}, ctype: "text/event-stream", retry: true, wantPosts: 2, wantBuilds: 2, wantErr: "HTTP 400"},
		{name: "body cannot be written", buildErr: true, wantBuilds: 1, wantErr: "writing the Test request: no body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var posts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(posts.Add(1)) - 1
				st := tt.status[min(n, len(tt.status)-1)]
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(st)
				io.WriteString(w, "ok")
			}))
			defer srv.Close()
			builds, retries := 0, 0
			got, err := PostRound(context.Background(), &Transport{MaxAttempts: 1}, RoundIO[string]{
				API: "Test", URL: srv.URL, Header: http.Header{}, Idle: time.Second,
				Build: func() ([]byte, error) {
					builds++
					if tt.buildErr {
						return nil, errors.New("no body")
					}
					return []byte(`{}`), nil
				},
				Retry: func(err error, body []byte) bool {
					retries++
					return tt.retry && retries == 1 && string(body) == `{}`
				},
				Whole: func(r io.Reader) (string, error) {
					b, err := io.ReadAll(r)
					return "whole:" + string(b), err
				},
				Stream: func(r io.Reader) (string, error) {
					b, err := io.ReadAll(r)
					return "stream:" + string(b), err
				},
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
			} else if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
			if posts.Load() != tt.wantPosts || builds != tt.wantBuilds || retries > 1 {
				t.Errorf("%d posts, %d builds, %d retry questions; want %d posts, %d builds, at most one question", posts.Load(), builds, retries, tt.wantPosts, tt.wantBuilds)
			}
		})
	}
}

func TestPostRoundInterrupted(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	stop := errors.New("the user stopped it")
	ctx, cancel := context.WithCancelCause(context.Background())
	_, err := PostRound(ctx, nil, RoundIO[int]{
		API: "Test", URL: srv.URL, Idle: time.Minute,
		Build: func() ([]byte, error) { return []byte(`{}`), nil },
		Whole: func(io.Reader) (int, error) { return 0, errors.New("not a whole answer") },
		Stream: func(r io.Reader) (int, error) {
			buf := make([]byte, 9)
			if _, err := io.ReadFull(r, buf); err != nil {
				return 0, err
			}
			cancel(stop)
			_, err := io.ReadAll(r)
			return 0, err
		},
	})
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "the Test stream was interrupted") {
		t.Fatalf("err = %v, want an interrupted stream wrapping the cause", err)
	}
}

func TestEncodeJSONAndIsJSONContent(t *testing.T) {
	b, err := EncodeJSON(map[string]string{"t": "<b>&</b>"})
	if err != nil || string(b) != `{"t":"<b>&</b>"}` {
		t.Errorf("EncodeJSON = %s, %v; want the bytes unescaped and no newline", b, err)
	}
	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "application/vnd.x+json": true,
		"text/event-stream": false, "": false, "application/jsonl": false, "not a type;;": false,
	} {
		if got := IsJSONContent(ct); got != want {
			t.Errorf("IsJSONContent(%q) = %v, want %v", ct, got, want)
		}
	}
}
