package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/datasource/extract"
	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/llm/tokens"
	"github.com/stewardhq/steward/store/docindex"
	"github.com/stewardhq/steward/store/searchindex"
)

// Index is an open local document index. It is safe for concurrent use;
// two runs of the same source should not overlap (each stays consistent,
// but they do the work twice).
type Index struct {
	x *docindex.Index
	// counters are the token counters by model, kept across runs so each
	// word is encoded once.
	mu       sync.Mutex
	counters map[string]*counter
}

// counter returns the token counter of a model.
func (ix *Index) counter(model string) (*counter, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if c, ok := ix.counters[model]; ok {
		return c, nil
	}
	c, err := newCounter(model)
	if err != nil {
		return nil, err
	}
	if ix.counters == nil {
		ix.counters = map[string]*counter{}
	}
	ix.counters[model] = c
	return c, nil
}

// ErrNotIndexed is returned by Search and Status for a source no run has
// stored anything of.
var ErrNotIndexed = docindex.ErrNoSource

// Open opens (creating when needed) the document index at dbPath, e.g.
// <data dir>/docs.db next to the mail index; the options are
// searchindex.Open's (its page cache).
func Open(ctx context.Context, dbPath string, opts ...searchindex.Option) (*Index, error) {
	x, err := docindex.Open(ctx, dbPath, opts...)
	if err != nil {
		return nil, err
	}
	return &Index{x: x}, nil
}

// Close closes the index.
func (ix *Index) Close() error { return ix.x.Close() }

// Store returns the underlying document index (for checks and tools).
func (ix *Index) Store() *docindex.Index { return ix.x }

// minChunkTokens is the smallest chunk size accepted.
const minChunkTokens = 16

// settings are a run's effective values.
type settings struct {
	spec     Spec
	model    string
	limits   embed.Limits
	maxTok   int
	overlap  int
	encoding string
	maxFile  int64
}

// chunking is the signature of how chunks are cut; a change re-indexes.
func (s settings) chunking() string {
	return fmt.Sprintf("v1|%s|%d|%d", s.encoding, s.maxTok, s.overlap)
}

// check validates a Spec; each error names the field and what it accepts.
func (s Spec) check() (settings, error) {
	var st settings
	if strings.TrimSpace(s.ID) == "" {
		return st, errors.New("data source ID is empty: give the source an ID")
	}
	if s.Path == "" || !filepath.IsAbs(s.Path) {
		return st, fmt.Errorf("data source %s: path %q is not absolute: give the full path of the folder or file", s.ID, s.Path)
	}
	if s.MaxChunkTokens < 0 || (s.MaxChunkTokens > 0 && s.MaxChunkTokens < minChunkTokens) {
		return st, fmt.Errorf("data source %s: maximum chunk size %d: use at least %d tokens, or 0 for the embedding provider's limit", s.ID, s.MaxChunkTokens, minChunkTokens)
	}
	if s.MaxFileBytes < 0 {
		return st, fmt.Errorf("data source %s: maximum file size %d: use a positive number of bytes, or 0 for %d", s.ID, s.MaxFileBytes, DefaultMaxFileBytes)
	}
	st.spec = s
	st.limits = embed.LimitsOf(s.Embedder)
	if s.Embedder != nil {
		st.model = s.Embedder.Model()
	}
	st.maxTok = st.limits.TokenLimit
	if s.MaxChunkTokens > 0 {
		st.maxTok = min(s.MaxChunkTokens, st.limits.TokenLimit)
	}
	switch {
	case s.OverlapTokens == 0:
		st.overlap = DefaultOverlapTokens
	case s.OverlapTokens < 0:
		st.overlap = 0
	default:
		st.overlap = s.OverlapTokens
	}
	st.overlap = min(st.overlap, st.maxTok-1)
	st.encoding, _ = tokens.Encoding(st.model)
	st.maxFile = s.MaxFileBytes
	if st.maxFile == 0 {
		st.maxFile = DefaultMaxFileBytes
	}
	return st, nil
}

// file is a file of the source found by the walk.
type file struct {
	rel, abs string
	size     int64
	mtime    time.Time
	hash     string
}

// walk lists the source's files of a supported kind. Symbolic links,
// hidden files and folders (names starting with a dot), Office lock files
// (~$…) and editor backups (…~) are passed over, as are files that are no
// documents (images, media, archives, binaries). Files of an older office
// format and folders that cannot be read are reported.
func walk(ctx context.Context, s Spec) ([]file, []Skipped, error) {
	var files []file
	var skipped []Skipped
	if s.File {
		fi, err := os.Lstat(s.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("data source %s: the file %s cannot be read: %w", s.ID, s.Path, err)
		}
		if fi.IsDir() {
			return nil, nil, fmt.Errorf("data source %s: %s is a folder, not a file: make it a folder source", s.ID, s.Path)
		}
		name := filepath.Base(s.Path)
		if _, ok, reason := extract.Detect(name); !ok {
			if reason == "" {
				reason = "not a document type Steward reads"
			}
			return nil, []Skipped{{Path: name, Reason: reason}}, nil
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// A file source names its file: follow the link.
			if fi, err = os.Stat(s.Path); err != nil {
				return nil, nil, fmt.Errorf("data source %s: the file %s cannot be read: %w", s.ID, s.Path, err)
			}
		}
		return []file{{rel: name, abs: s.Path, size: fi.Size(), mtime: fi.ModTime()}}, nil, nil
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("data source %s: the folder %s cannot be read: %w", s.ID, s.Path, err)
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("data source %s: %s is a file, not a folder: make it a file source", s.ID, s.Path)
	}
	err = filepath.WalkDir(s.Path, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel, _ := filepath.Rel(s.Path, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if p == s.Path {
				return err
			}
			skipped = append(skipped, Skipped{Path: rel, Reason: "cannot be read: " + errReason(err)})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == s.Path {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") || strings.HasSuffix(name, "~") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 || !(d.IsDir() || d.Type().IsRegular()) {
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if _, ok, reason := extract.Detect(name); !ok {
			if reason != "" {
				skipped = append(skipped, Skipped{Path: rel, Reason: reason})
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			skipped = append(skipped, Skipped{Path: rel, Reason: "cannot be read: " + errReason(err)})
			return nil
		}
		files = append(files, file{rel: rel, abs: p, size: info.Size(), mtime: info.ModTime()})
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("data source %s: the folder %s cannot be read: %w", s.ID, s.Path, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, skipped, nil
}

// errReason is an error's message without the path it names.
func errReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// hashFile returns the hex SHA-256 of a file's content, reading at most
// limit bytes (ok false when it is larger).
func hashFile(path string, limit int64) (string, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return "", false, err
	}
	if n > limit {
		return "", false, nil
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// hashed is the outcome of hashFile.
type hashed struct {
	hash string
	ok   bool
	err  error
}

// hashFiles hashes files in parallel (reading files and SHA-256 keep a
// core busy each), the outcomes in the files' order.
func hashFiles(ctx context.Context, files []file, limit int64) []hashed {
	out := make([]hashed, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(files))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := ctx.Err(); err != nil {
					out[i].err = err
					continue
				}
				out[i].hash, out[i].ok, out[i].err = hashFile(files[i].abs, limit)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// run is one Sync.
type run struct {
	ix       *Index
	st       settings
	start    time.Time
	progress func(Progress)

	mu       sync.Mutex
	stats    Stats
	prog     Progress
	lastProg time.Time
}

func (r *run) report(force bool) {
	if r.progress == nil {
		return
	}
	r.mu.Lock()
	now := time.Now()
	if !force && now.Sub(r.lastProg) < 200*time.Millisecond {
		r.mu.Unlock()
		return
	}
	r.lastProg = now
	p := r.prog
	p.Elapsed = now.Sub(r.start)
	r.mu.Unlock()
	r.progress(p)
}

func (r *run) add(f func(s *Stats, p *Progress)) {
	r.mu.Lock()
	f(&r.stats, &r.prog)
	r.mu.Unlock()
}

// Sync brings the index of source s up to date with its files: added and
// changed files are read and indexed, renamed and copied ones keep (or
// copy) their chunks and vectors, removed ones leave the index, and the
// chunks without a vector are embedded. progress, when not nil, is called
// from one goroutine at a time: after each batch of documents stored,
// otherwise at most five times a second, and once at the end. A missing or unreadable folder or file fails the run and
// leaves the index as it was; a file that cannot be read is reported in
// Stats.Skipped and the run goes on.
func (ix *Index) Sync(ctx context.Context, s Spec, progress func(Progress)) (Stats, error) {
	st, err := s.check()
	if err != nil {
		return Stats{}, err
	}
	r := &run{ix: ix, st: st, start: time.Now(), progress: progress}
	r.stats.WordsOnly = s.Embedder == nil
	files, skipped, err := walk(ctx, s)
	if err != nil {
		return Stats{}, err
	}
	reset, err := ix.x.BeginRun(ctx, docindex.Source{ID: s.ID, Path: s.Path, File: s.File, Chunking: st.chunking(), Model: st.model}, r.start)
	if err != nil {
		return Stats{}, err
	}
	r.stats.Rebuilt = reset
	r.stats.Skipped = skipped
	r.prog.Files = len(files)
	docs, err := ix.x.Documents(ctx, s.ID)
	if err != nil {
		return Stats{}, err
	}
	failures, err := ix.x.Failures(ctx, s.ID)
	if err != nil {
		return Stats{}, err
	}

	// Embedding runs beside the indexing, on what each commit stored.
	emb := newEmbedLoop(ix.x, s.ID, s.Embedder, st.limits.BatchSize, r)
	embDone := make(chan struct{})
	go func() { defer close(embDone); emb.run(ctx) }()
	defer func() { emb.finish(); <-embDone }()

	present := map[string]bool{}
	var todo []file
	for _, f := range files {
		present[f.rel] = true
		if d, ok := docs[f.rel]; ok && d.Size == f.size && d.ModTime.Equal(f.mtime.UTC()) {
			r.stats.Unchanged++
			r.prog.FilesDone++
			continue
		}
		if fl, ok := failures[f.rel]; ok && fl.Size == f.size && fl.ModTime.Equal(f.mtime.UTC()) {
			r.stats.Skipped = append(r.stats.Skipped, Skipped{Path: f.rel, Reason: fl.Reason})
			r.prog.FilesDone++
			continue
		}
		todo = append(todo, f)
	}
	r.report(true)
	// Documents whose file is gone, by content, for renames.
	missing := map[string][]string{}
	for p, d := range docs {
		if !present[p] {
			missing[d.Hash] = append(missing[d.Hash], p)
		}
	}
	for _, ps := range missing {
		sort.Strings(ps)
	}
	// Documents still present, by content, for copies.
	byHash := map[string]string{}
	for p, d := range docs {
		if present[p] {
			if q, ok := byHash[d.Hash]; !ok || p < q {
				byHash[d.Hash] = p
			}
		}
	}
	var index []file
	var copies []file // same content as a file indexed in this run
	indexing := map[string]string{}
	hashes := hashFiles(ctx, todo, st.maxFile)
	for i, f := range todo {
		if err := ctx.Err(); err != nil {
			return r.stats, err
		}
		h, ok, err := hashes[i].hash, hashes[i].ok, hashes[i].err
		if err != nil {
			r.skip(ctx, f, "cannot be read: "+errReason(err), false)
			continue
		}
		if !ok {
			r.skip(ctx, f, fmt.Sprintf("the file is larger than %d MiB", st.maxFile>>20), true)
			continue
		}
		f.hash = h
		old, had := docs[f.rel]
		switch {
		case had && old.Hash == h:
			// Touched, not changed.
			if err := ix.x.Touch(ctx, s.ID, f.rel, f.size, f.mtime); err != nil {
				return r.stats, err
			}
			r.add(func(s *Stats, p *Progress) { s.Unchanged++; p.FilesDone++ })
		case !had && len(missing[h]) > 0:
			from := missing[h][0]
			missing[h] = missing[h][1:]
			if err := ix.x.Rename(ctx, s.ID, from, f.rel, f.size, f.mtime); err != nil {
				return r.stats, err
			}
			r.add(func(s *Stats, p *Progress) { s.Renamed++; p.FilesDone++ })
		case byHash[h] != "" && byHash[h] != f.rel:
			if err := ix.x.Copy(ctx, s.ID, byHash[h], f.rel, f.size, f.mtime); err != nil {
				return r.stats, err
			}
			r.add(func(s *Stats, p *Progress) {
				if had {
					s.Changed++
				} else {
					s.Added++
				}
				p.FilesDone++
			})
		case indexing[h] != "":
			copies = append(copies, f)
		default:
			indexing[h] = f.rel
			index = append(index, f)
		}
		r.report(false)
	}
	emb.kick()
	if err := r.indexFiles(ctx, index, docs, emb); err != nil {
		return r.stats, err
	}
	for _, f := range copies {
		from := indexing[f.hash]
		if d, err := ix.x.Documents(ctx, s.ID); err == nil {
			if dd, ok := d[from]; !ok || dd.Hash != f.hash {
				// The original could not be indexed: index the copy.
				if err := r.indexFiles(ctx, []file{f}, docs, emb); err != nil {
					return r.stats, err
				}
				continue
			}
		}
		if err := ix.x.Copy(ctx, s.ID, from, f.rel, f.size, f.mtime); err != nil {
			return r.stats, err
		}
		_, had := docs[f.rel]
		r.add(func(s *Stats, p *Progress) {
			if had {
				s.Changed++
			} else {
				s.Added++
			}
			p.FilesDone++
		})
	}
	// What is gone leaves the index.
	var gone []string
	for _, ps := range missing {
		gone = append(gone, ps...)
	}
	if err := ix.x.DeleteDocuments(ctx, s.ID, gone); err != nil {
		return r.stats, err
	}
	r.stats.Removed = len(gone)
	var staleFailures []string
	for p := range failures {
		if !present[p] {
			staleFailures = append(staleFailures, p)
		}
	}
	if err := ix.x.DeleteFailures(ctx, s.ID, staleFailures); err != nil {
		return r.stats, err
	}
	emb.finish()
	<-embDone
	r.mu.Lock()
	r.stats.Embedded = emb.embedded
	r.stats.EmbeddingError = emb.errText
	r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return r.stats, err
	}
	if err := ix.x.RefreshWordStats(ctx); err != nil {
		return r.stats, err
	}
	if err := ix.x.EndRun(ctx, s.ID, time.Now()); err != nil {
		return r.stats, err
	}
	sortSkipped(r.stats.Skipped)
	r.report(true)
	return r.stats, nil
}

// skip reports a file that could not be indexed; a permanent failure is
// recorded so the file is not read again until it changes.
func (r *run) skip(ctx context.Context, f file, reason string, permanent bool) {
	if permanent {
		_ = r.ix.x.SetFailure(ctx, r.st.spec.ID, docindex.Failure{Path: f.rel, Size: f.size, ModTime: f.mtime, Reason: reason})
	}
	r.add(func(s *Stats, p *Progress) {
		s.Skipped = append(s.Skipped, Skipped{Path: f.rel, Reason: reason})
		p.FilesDone++
	})
}

// extracted is a file read and cut into chunks by a worker.
type extracted struct {
	f      file
	doc    docindex.NewDocument
	reason string // why it was skipped
	perm   bool
	bytes  int64
}

// Batch bounds of the writer: a transaction per this many documents or
// bytes of chunk text, whichever comes first.
const (
	batchDocs  = 256
	batchBytes = 4 << 20
)

// indexFiles reads, cuts and stores files: workers extract and chunk in
// parallel, one writer stores their documents in batches.
func (r *run) indexFiles(ctx context.Context, files []file, old map[string]docindex.Document, emb *embedLoop) error {
	if len(files) == 0 {
		return nil
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(files)))
	jobs := make(chan file)
	results := make(chan extracted, workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := r.ix.counter(r.st.model)
			if err != nil {
				for f := range jobs {
					results <- extracted{f: f, reason: "the token counter could not be loaded: " + err.Error()}
				}
				return
			}
			for f := range jobs {
				res := r.extractFile(ctx, c, f)
				select {
				case results <- res:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, f := range files {
			select {
			case jobs <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	var batch []docindex.NewDocument
	var batchText int
	var batchStats []extracted
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := r.ix.x.PutDocuments(ctx, r.st.spec.ID, batch); err != nil {
			return err
		}
		r.add(func(s *Stats, p *Progress) {
			for _, e := range batchStats {
				if _, had := old[e.f.rel]; had {
					s.Changed++
				} else {
					s.Added++
				}
				s.Chunks += len(e.doc.Chunks)
				p.Chunks += len(e.doc.Chunks)
				p.FilesDone++
			}
		})
		batch, batchText, batchStats = nil, 0, nil
		emb.kick()
		// Each commit is reported: it is what a killed run keeps.
		r.report(true)
		return nil
	}
	for res := range results {
		r.add(func(_ *Stats, p *Progress) { p.Bytes += res.bytes })
		if res.reason != "" {
			r.skip(ctx, res.f, res.reason, res.perm)
			r.report(false)
			continue
		}
		batch = append(batch, res.doc)
		batchStats = append(batchStats, res)
		for _, c := range res.doc.Chunks {
			batchText += len(c.Text)
		}
		if len(batch) >= batchDocs || batchText >= batchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return flush()
}

// extractFile reads one file, extracts its text and cuts it into chunks.
func (r *run) extractFile(ctx context.Context, c *counter, f file) extracted {
	res := extracted{f: f}
	format, _, _ := extract.Detect(f.rel)
	data, err := readFile(f.abs, r.st.maxFile)
	if err != nil {
		res.reason = "cannot be read: " + errReason(err)
		return res
	}
	if data == nil {
		res.reason, res.perm = fmt.Sprintf("the file is larger than %d MiB", r.st.maxFile>>20), true
		return res
	}
	res.bytes = int64(len(data))
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	doc, err := extract.Bytes(ctx, format, data, extract.Limits{MaxFile: r.st.maxFile})
	if err != nil {
		var e *extract.Error
		if errors.As(err, &e) {
			res.reason, res.perm = e.Reason, e.Permanent
		} else {
			res.reason = err.Error()
		}
		return res
	}
	// A file that changed while it was read is left to the next run.
	if fi, err := os.Stat(f.abs); err != nil || fi.Size() != f.size || !fi.ModTime().Equal(f.mtime) {
		res.reason = "changed while it was indexed: it is indexed on the next run"
		return res
	}
	chunks := chunkDoc(c, doc, r.st.maxTok, r.st.overlap)
	if len(chunks) == 0 {
		res.reason, res.perm = "the file holds no text", true
		return res
	}
	title := doc.Title
	if title == "" {
		title = filepath.Base(f.rel)
	}
	res.doc = docindex.NewDocument{
		Document: docindex.Document{Path: f.rel, Size: f.size, ModTime: f.mtime, Hash: hash, Kind: string(doc.Kind), Title: title},
		Chunks:   chunks,
	}
	if doc.Truncated {
		r.add(func(s *Stats, _ *Progress) {
			s.Skipped = append(s.Skipped, Skipped{Path: f.rel, Reason: fmt.Sprintf("only the first %d MiB of its text were indexed", extract.DefaultMaxText>>20)})
		})
	}
	return res
}

// readFile reads a file of at most limit bytes (nil when larger).
func readFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil
	}
	return data, nil
}

// embedLoop embeds the chunks of a source that lack a vector of its model,
// beside the indexing: each commit kicks it, finish lets it drain and end.
type embedLoop struct {
	x        *docindex.Index
	source   string
	emb      embed.Embedder
	batch    int
	r        *run
	kicks    chan struct{}
	done     chan struct{}
	once     sync.Once
	finish   func()
	embedded int
	errText  string
}

func newEmbedLoop(x *docindex.Index, source string, emb embed.Embedder, batch int, r *run) *embedLoop {
	l := &embedLoop{x: x, source: source, emb: emb, batch: batch, r: r, kicks: make(chan struct{}, 1), done: make(chan struct{})}
	l.finish = func() { l.once.Do(func() { close(l.done) }) }
	return l
}

func (l *embedLoop) kick() {
	select {
	case l.kicks <- struct{}{}:
	default:
	}
}

// run embeds pending chunks whenever kicked, and once more after finish.
func (l *embedLoop) run(ctx context.Context) {
	if l.emb == nil {
		return
	}
	var after int64
	for {
		finishing := false
		select {
		case <-l.kicks:
		case <-l.done:
			finishing = true
		case <-ctx.Done():
			return
		}
		// Every chunk above after was looked at; a new commit only adds
		// higher IDs, except for vectors passed on, which need none.
		for {
			pend, err := l.x.PendingChunks(ctx, l.source, l.emb.Model(), after, l.batch)
			if err != nil {
				if ctx.Err() == nil {
					l.errText = err.Error()
				}
				return
			}
			if len(pend) == 0 {
				break
			}
			texts := make([]string, len(pend))
			for i, p := range pend {
				texts[i] = p.Text
			}
			vecs, err := l.emb.Embed(ctx, texts)
			if err != nil {
				if ctx.Err() == nil {
					l.errText = "the embedding provider failed, the chunks not embedded are found by words until the next run: " + err.Error()
				}
				return
			}
			m := make(map[int64][]float32, len(pend))
			for i, p := range pend {
				m[p.ID] = vecs[i]
			}
			if err := l.x.SetEmbeddings(ctx, l.emb.Model(), m); err != nil {
				if ctx.Err() == nil {
					l.errText = err.Error()
				}
				return
			}
			after = pend[len(pend)-1].ID
			l.embedded += len(pend)
			l.r.add(func(_ *Stats, p *Progress) { p.Embedded += len(pend) })
			l.r.report(false)
		}
		if finishing {
			return
		}
	}
}

func sortSkipped(s []Skipped) {
	sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
}
