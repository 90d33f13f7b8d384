package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// ExtractJob is a distributed extraction: everything a worker needs to
// extract its shards (it travels to the workers as JSON).
type ExtractJob struct {
	// Model and Manifest are the encoder and its manifest; Threads and
	// Device each worker slot's ONNX Runtime session's.
	Model    string          `json:"model"`
	Manifest models.Manifest `json:"manifest"`
	Threads  int             `json:"threads"`
	Device   string          `json:"device"`
	// Data, Dataset are the source and how to open it.
	Data    string                  `json:"data"`
	Dataset features.DatasetOptions `json:"dataset"`
	// Offset and Limit choose the examples (Limit 0: to the end); the
	// shards cut them into ranges of ShardRows examples.
	Offset, Limit, ShardRows int64
	// Extract are the extraction's options (batch, decode workers,
	// --skip-bad, views, the files' metadata and identity); Resume
	// continues interrupted shards and keeps finished ones.
	Extract encode.ExtractOptions `json:"extract"`
	// Out is the manifest to write; the shards go to Out's name without
	// its extension + ".shards/".
	Out string `json:"out"`
	// Workers bounds the shards one worker process extracts at once.
	Workers int `json:"workers"`
}

// ShardDir is where Extract writes the shards of manifest out.
func ShardDir(out string) string {
	return out[:len(out)-len(filepath.Ext(out))] + ".shards"
}

// shardSpec is one shard: a range of examples and its file.
type shardSpec struct {
	Index         int
	Offset, Limit int64
	Path          string
}

// ExtractResult reports a distributed extraction.
type ExtractResult struct {
	Out    string `json:"out"`
	Shards int    `json:"shards"`
	Made   int    `json:"shards_made"`
	Rows   int64  `json:"rows"`
	Dim    int    `json:"dim"`
	Runner string `json:"runner"`
}

// Extract runs job on the runner: the shards as one pipeline (each range
// a bundle's element, reshuffled so that runners spread them), then the
// manifest, once every shard opens as the manifest says. A shard is
// written whole or not at all (encode.Extract's temporary file); without
// Resume, an existing shard folder is refused.
func Extract(ctx context.Context, job ExtractJob, o Options) (*ExtractResult, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	total, err := count(job)
	if err != nil {
		return nil, err
	}
	batch := int64(max(1, job.Extract.Batch))
	if job.ShardRows <= 0 {
		// Four shards per worker slot, so that uneven shards even out.
		job.ShardRows = max(batch, (total+4*int64(max(1, job.Workers))-1)/(4*int64(max(1, job.Workers))))
	}
	job.ShardRows = (job.ShardRows + batch - 1) / batch * batch // whole encoder batches
	dir := ShardDir(job.Out)
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 && !job.Extract.Resume {
		return nil, fmt.Errorf("%s holds shards of an earlier run: pass --resume to finish it, or remove the folder", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var todo []string
	var specs []shardSpec
	for i, at := 0, job.Offset; at < job.Offset+total; i++ {
		sp := shardSpec{Index: i, Offset: at, Limit: min(job.ShardRows, job.Offset+total-at), Path: filepath.Join(dir, fmt.Sprintf("%05d.arrow", i))}
		specs = append(specs, sp)
		at += sp.Limit
		if _, err := os.Stat(sp.Path); err == nil {
			continue // finished by an earlier run (written whole)
		}
		b, _ := json.Marshal(sp)
		todo = append(todo, string(b))
	}
	job.Extract.Progress = nil // (a writer does not travel)
	cfg, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	if len(todo) > 0 {
		p, s := pipeline()
		elems := beam.Reshuffle(s, beam.CreateList(s, todo))
		// Each shard emits its path across a fusion break (a reshuffle):
		// a stage without outputs makes Prism (v2.77) poll in a busy loop
		// until its bundle ends, which took a core from ONNX Runtime and
		// made extraction 2.6 times slower.
		done := beam.ParDo(s, &extractShardFn{Job: string(cfg)}, elems)
		beam.ParDo0(s, shardDone, beam.Reshuffle(s, done))
		if err := execute(ctx, p, o); err != nil {
			return nil, err
		}
	}
	m := &features.ShardManifest{Runner: o.Name(), EncoderSHA256: job.Extract.Meta.EncoderSHA256}
	for _, sp := range specs {
		f, err := features.Open(sp.Path, features.ReadOptions{})
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", sp.Index, err)
		}
		rel, _ := filepath.Rel(filepath.Dir(job.Out), sp.Path)
		m.Shards = append(m.Shards, features.Shard{Path: rel, Rows: f.Rows()})
		m.Rows += f.Rows()
		m.Dim = f.Dim()
		f.Close()
	}
	if err := features.WriteShardManifest(job.Out, m); err != nil {
		return nil, err
	}
	return &ExtractResult{Out: job.Out, Shards: len(specs), Made: len(todo), Rows: m.Rows, Dim: m.Dim, Runner: o.Name()}, nil
}

// count returns the number of examples job extracts: the source's, after
// Offset, at most Limit. The source must know its length.
func count(job ExtractJob) (int64, error) {
	ds, err := features.OpenDataset(job.Data, job.Dataset)
	if err != nil {
		return 0, err
	}
	defer ds.Close()
	n := ds.Len()
	if n < 0 {
		return 0, fmt.Errorf("%s: a distributed extraction cuts the source into ranges, and this source does not say how many images it holds", job.Data)
	}
	n = max(0, n-job.Offset)
	if job.Limit > 0 {
		n = min(n, job.Limit)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no images after offset %d", job.Data, job.Offset)
	}
	return n, nil
}

// extractShardFn extracts the shards it is given; Job is the ExtractJob's
// JSON.
type extractShardFn struct {
	Job string
	job ExtractJob
}

func (f *extractShardFn) Setup() error { return json.Unmarshal([]byte(f.Job), &f.job) }

func (f *extractShardFn) ProcessElement(ctx context.Context, elem string, emit func(string)) error {
	var sp shardSpec
	if err := json.Unmarshal([]byte(elem), &sp); err != nil {
		return err
	}
	release := acquire(f.job.Workers)
	defer release()
	sess, put, err := sessions.get(f.job)
	if err != nil {
		return err
	}
	defer put()
	ds, err := features.OpenDataset(f.job.Data, f.job.Dataset)
	if err != nil {
		return err
	}
	defer ds.Close()
	opt := f.job.Extract
	opt.Offset, opt.Limit, opt.Progress = sp.Offset, sp.Limit, nil
	opt.Identity = map[string]string{}
	for k, v := range f.job.Extract.Identity {
		opt.Identity[k] = v
	}
	opt.Identity["shard"] = fmt.Sprintf("%d: examples %d..%d", sp.Index, sp.Offset, sp.Offset+sp.Limit-1)
	res, err := encode.Extract(ctx, ds, sess, encode.NewPreprocessor(f.job.Manifest.Input), sp.Path, opt)
	if err != nil {
		return fmt.Errorf("shard %d (examples %d..%d): %w", sp.Index, sp.Offset, sp.Offset+sp.Limit-1, err)
	}
	// Progress: on Prism this process's stderr, on a remote runner the
	// worker's log.
	fmt.Fprintf(os.Stderr, "dpfeat: shard %d (examples %d..%d): %d rows in %.1f s\n", sp.Index, sp.Offset, sp.Offset+sp.Limit-1, res.Rows, res.Seconds)
	emit(sp.Path)
	return nil
}

// sessionPool keeps a worker process's ONNX Runtime sessions, one per
// shard in progress, reused by later shards and bundles.
type sessionPool struct {
	mu   sync.Mutex
	free map[string][]*encode.Session
}

var sessions = sessionPool{free: map[string][]*encode.Session{}}

func (p *sessionPool) get(job ExtractJob) (*encode.Session, func(), error) {
	key := fmt.Sprintf("%s|%d|%s", job.Model, job.Threads, job.Device)
	p.mu.Lock()
	if free := p.free[key]; len(free) > 0 {
		s := free[len(free)-1]
		p.free[key] = free[:len(free)-1]
		p.mu.Unlock()
		return s, func() { p.put(key, s) }, nil
	}
	p.mu.Unlock()
	dev, err := encode.ParseDevice(job.Device)
	if err != nil {
		return nil, nil, err
	}
	m := job.Manifest
	s, err := encode.OpenSession(job.Model, &m, encode.SessionOptions{Threads: job.Threads, Device: dev})
	if err != nil {
		return nil, nil, err
	}
	return s, func() { p.put(key, s) }, nil
}

func (p *sessionPool) put(key string, s *encode.Session) {
	p.mu.Lock()
	p.free[key] = append(p.free[key], s)
	p.mu.Unlock()
}

// shardDone consumes the finished shards' paths (the driver checks the
// shards themselves).
func shardDone(string) {}

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&extractShardFn{})
	register.Function1x0(shardDone)
	register.Emitter1[string]()
	beam.RegisterType(reflect.TypeOf((*extractShardFn)(nil)).Elem())
}
