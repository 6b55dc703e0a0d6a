package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestPostIdle(t *testing.T) {
	tests := []struct {
		name     string
		idle     time.Duration
		silence  time.Duration
		wantBody string
		wantIdle bool
		wantErr  bool
	}{
		{name: "answer in time", idle: 2 * time.Second, wantBody: "data: a\n\ndata: b\n\n"},
		{name: "silent stream", idle: 50 * time.Millisecond, silence: 5 * time.Second, wantBody: "data: a\n\n", wantIdle: true},
		{name: "zero idle", idle: 0, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: a\n\n")
				w.(http.Flusher).Flush()
				if tt.silence > 0 {
					select {
					case <-time.After(tt.silence):
					case <-release:
						return
					case <-r.Context().Done():
						return
					}
				}
				io.WriteString(w, "data: b\n\n")
			}))
			defer srv.Close()
			defer close(release)
			resp, stop, err := PostIdle(context.Background(), nil, srv.URL, http.Header{}, []byte(`{}`), tt.idle)
			if tt.wantErr {
				if err == nil {
					stop()
					t.Fatal("PostIdle accepted a non-positive idle timeout")
				}
				return
			}
			if err != nil {
				t.Fatalf("PostIdle: %v", err)
			}
			defer stop()
			got, err := io.ReadAll(resp.Body)
			if string(got) != tt.wantBody {
				t.Errorf("body = %q, want %q", got, tt.wantBody)
			}
			if tt.wantIdle != errors.Is(err, ErrIdle) {
				t.Errorf("read error = %v, want ErrIdle: %v", err, tt.wantIdle)
			}
			if !tt.wantIdle && err != nil {
				t.Errorf("read error = %v, want none", err)
			}
		})
	}
}
