package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stampedScript streams n text deltas per answer, each carrying the time
// the provider wrote it ("<unix nanoseconds>;"), gap apart.
func stampedScript(n int, gap time.Duration) func(providerRequest) reply {
	return func(providerRequest) reply {
		return reply{frames: nil, gap: gap, stamped: n}
	}
}

// loadResult is what one run of concurrent chats came to.
type loadResult struct {
	events    int
	latencies []time.Duration // provider write to SSE event read, per delta
	// written is provider write to Steward writing the event to the
	// stream's socket: what Steward adds, plus the hop from the provider.
	written []time.Duration
	// direct is provider write to a reader of the provider's own stream,
	// under the same load, read side by side.
	direct   []time.Duration
	peakHeap uint64
	peakSys  uint64
	elapsed  time.Duration
}

// runLoad starts chats concurrent turns of n stamped deltas each and reads
// every stream to its end. It fails tb when anything is lost: a delta
// missing or out of order in a stream, a stream without done, or a stored
// answer that is not the whole text.
func runLoad(tb testing.TB, chats, n int, gap time.Duration) loadResult {
	var rec *stampRecorder
	e := newEnv(tb, envOptions{script: stampedScript(n, gap), wrap: func(h http.Handler) http.Handler {
		rec = &stampRecorder{next: h}
		return rec
	}})
	ids := make([]string, chats)
	for i := range ids {
		st, b := e.call("POST", "/api/chats", map[string]any{"tools": []string{}})
		if st != 201 {
			tb.Fatalf("create: %d %s", st, b)
		}
		ids[i] = decode[chatView](tb, b).ID
	}
	var res loadResult
	var mu sync.Mutex
	var stop atomic.Bool
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		var ms runtime.MemStats
		for !stop.Load() {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			res.peakHeap = max(res.peakHeap, ms.HeapInuse)
			res.peakSys = max(res.peakSys, ms.Sys)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat, text, err := streamTurn(e, id)
			if err != nil {
				tb.Error(err)
				return
			}
			want := 0
			for _, part := range strings.Split(strings.TrimSuffix(text, ";"), ";") {
				if k, err := strconv.Atoi(strings.SplitN(part, "@", 2)[0]); err != nil || k != want {
					tb.Errorf("chat %s: delta %d arrived as %q: lost or out of order", id, want, part)
					return
				}
				want++
			}
			if want != n {
				tb.Errorf("chat %s: %d of %d deltas arrived", id, want, n)
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.events += len(lat)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	stop.Store(true)
	sampled.Wait()
	res.written = rec.take()
	res.direct = direct(tb, e, chats)
	// Every answer is stored whole.
	for _, id := range ids {
		st, b := e.call("GET", "/api/chats/"+id, nil)
		v := decode[chatView](tb, b)
		if st != 200 || len(v.Messages) != 2 || strings.Count(v.Messages[1].Text, ";") != n {
			tb.Errorf("chat %s is not stored whole: %d messages", id, len(v.Messages))
		}
	}
	return res
}

// streamTurn sends one turn and reads its stream, returning the latency of
// every delta and the text without the stamps' times.
func streamTurn(e *env, id string) ([]time.Duration, string, error) {
	body, _ := json.Marshal(map[string]any{"text": "stream please"})
	req, _ := http.NewRequest("POST", e.url("/api/chats/"+id+"/turns"), strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil, "", fmt.Errorf("chat %s: status %d", id, res.StatusCode)
	}
	var lat []time.Duration
	var text strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		now := time.Now()
		var ev struct {
			Type, Text string
			Stop       string
		}
		if err := json.Unmarshal([]byte(line[6:]), &ev); err != nil {
			return nil, "", err
		}
		switch ev.Type {
		case "text":
			for _, part := range strings.Split(strings.TrimSuffix(ev.Text, ";"), ";") {
				k, at, ok := strings.Cut(part, "@")
				ns, err := strconv.ParseInt(at, 10, 64)
				if !ok || err != nil {
					return nil, "", fmt.Errorf("chat %s: a delta without its stamp: %q", id, part)
				}
				lat = append(lat, now.Sub(time.Unix(0, ns)))
				text.WriteString(k + "@;")
			}
		case "done":
			if ev.Stop != "answered" {
				return nil, "", fmt.Errorf("chat %s ended %s", id, ev.Stop)
			}
			done = true
		case "error":
			return nil, "", fmt.Errorf("chat %s: %s", id, line)
		}
	}
	if !done {
		return nil, "", fmt.Errorf("chat %s: the stream ended without done", id)
	}
	return lat, text.String(), sc.Err()
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// TestFiftyConcurrentChatsLoseNothing streams 50 chats at once and checks
// that every delta of every chat arrives, in order, and is stored. It
// measures nothing; BenchmarkFiftyConcurrentChats does.
func TestFiftyConcurrentChatsLoseNothing(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	res := runLoad(t, 50, 20, time.Millisecond)
	if res.events != 50*20 {
		t.Fatalf("%d of %d deltas arrived", res.events, 50*20)
	}
}

// BenchmarkFiftyConcurrentChats streams 50 chats at once from a scripted
// provider on loopback, 100 deltas each, 5 ms apart, and reports the time
// from the provider writing a delta to the browser-side reader getting its
// event (p50, p95, max), and the process's peak heap and memory from the
// OS. Run with -benchtime=1x.
func BenchmarkFiftyConcurrentChats(b *testing.B) {
	b.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	for b.Loop() {
		res := runLoad(b, 50, 100, 5*time.Millisecond)
		b.ReportMetric(float64(res.events), "events")
		b.ReportMetric(float64(percentile(res.latencies, 0.50).Microseconds())/1000, "p50-ms/event")
		b.ReportMetric(float64(percentile(res.latencies, 0.95).Microseconds())/1000, "p95-ms/event")
		b.ReportMetric(float64(percentile(res.latencies, 1).Microseconds())/1000, "max-ms/event")
		b.ReportMetric(float64(percentile(res.written, 0.50).Microseconds())/1000, "steward-p50-ms/event")
		b.ReportMetric(float64(percentile(res.written, 0.95).Microseconds())/1000, "steward-p95-ms/event")
		b.ReportMetric(float64(percentile(res.direct, 0.50).Microseconds())/1000, "direct-p50-ms/event")
		b.ReportMetric(float64(percentile(res.direct, 0.95).Microseconds())/1000, "direct-p95-ms/event")
		b.ReportMetric(float64(res.peakHeap)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(res.peakSys)/(1<<20), "peak-sys-MB")
		b.ReportMetric(res.elapsed.Seconds(), "wall-s")
	}
}

// stampRecorder notes, for every stamped delta the server writes to an
// event stream, how long after the provider wrote it that happened.
type stampRecorder struct {
	next http.Handler
	mu   sync.Mutex
	lat  []time.Duration
}

func (s *stampRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.next.ServeHTTP(&stampWriter{ResponseWriter: w, rec: s}, r)
}

func (s *stampRecorder) take() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lat
}

type stampWriter struct {
	http.ResponseWriter
	rec *stampRecorder
}

func (w *stampWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *stampWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	now := time.Now()
	if bytes.HasPrefix(p, []byte("id: ")) && bytes.Contains(p, []byte("event: text\n")) {
		_, data, _ := bytes.Cut(p, []byte("data: "))
		var ev struct{ Text string }
		if json.Unmarshal(bytes.TrimSpace(data), &ev) == nil {
			for _, part := range strings.Split(strings.TrimSuffix(ev.Text, ";"), ";") {
				if _, at, ok := strings.Cut(part, "@"); ok {
					if ns, err := strconv.ParseInt(at, 10, 64); err == nil {
						w.rec.mu.Lock()
						w.rec.lat = append(w.rec.lat, now.Sub(time.Unix(0, ns)))
						w.rec.mu.Unlock()
					}
				}
			}
		}
	}
	return n, err
}

// direct reads chats streams of the scripted provider itself at once, as
// Steward does, and returns the latency of every delta: the floor that
// the machine's load sets for any reader.
func direct(tb testing.TB, e *env, chats int) []time.Duration {
	var mu sync.Mutex
	var out []time.Duration
	var wg sync.WaitGroup
	for range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Post(e.provider.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"stream please"}]}`))
			if err != nil {
				tb.Error(err)
				return
			}
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				line := sc.Text()
				if !strings.HasPrefix(line, "data: {") {
					continue
				}
				now := time.Now()
				var f struct {
					Choices []struct {
						Delta struct{ Content string }
					}
				}
				if json.Unmarshal([]byte(line[6:]), &f) != nil || len(f.Choices) == 0 {
					continue
				}
				if _, at, ok := strings.Cut(strings.TrimSuffix(f.Choices[0].Delta.Content, ";"), "@"); ok {
					if ns, err := strconv.ParseInt(at, 10, 64); err == nil {
						mu.Lock()
						out = append(out, now.Sub(time.Unix(0, ns)))
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	return out
}
