package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/internal/outlock"
	"github.com/dpfeat/dpfeat/runner/spec"
)

// ExtractJob, ExtractResult, ShardDir and WorkDir are package spec's:
// what an extraction is, without Beam.
type (
	ExtractJob    = spec.ExtractJob
	ExtractResult = spec.ExtractResult
)

// ShardDir is where Extract publishes the shards of manifest out.
func ShardDir(out string) string { return spec.ShardDir(out) }

// WorkDir is where Extract writes the shards until every one is finished.
func WorkDir(out string) string { return spec.WorkDir(out) }

// shardSpec is one shard: a range of examples and its file.
type shardSpec struct {
	Index         int
	Offset, Limit int64
	Path          string
}

// runFile is the work folder's record of its run: what must be the same
// for a resume to reuse its finished shards, and the layout they follow.
const runFile = "run.json"

type runState struct {
	Version   int               `json:"version"`
	Identity  map[string]string `json:"identity"`
	ShardRows int64             `json:"shard_rows"`
	Offset    int64             `json:"offset"`
	Examples  int64             `json:"examples"`
	// Generation names the run's shards on object storage
	// (extractToStore); empty on a local disk.
	Generation string `json:"generation,omitempty"`
}

// Extract runs job on the runner: the shards as one pipeline (each range
// a bundle's element, reshuffled so that runners spread them), then the
// manifest, once every shard opens as the manifest says.
//
// One run owns a manifest at a time (a lock). The shards are written to
// WorkDir(job.Out), each whole or not at all (encode.Extract's partial
// file), beside a record of the run (its identity and layout); an
// interrupted or failed run leaves that folder, which a run with Resume
// continues — reusing a finished shard only when its run's identity is
// this one's — and one with Restart discards (only the files this code
// writes). When every shard is finished, the folder replaces
// ShardDir(job.Out) and the manifest is written; an earlier run's shards
// are removed only then, so a failing run never destroys them.
func Extract(ctx context.Context, job ExtractJob, o Options) (*ExtractResult, error) {
	if err := Check(o); err != nil {
		return nil, err
	}
	if job.ShardRows < 0 {
		return nil, fmt.Errorf("shard rows %d; expected at least 1 (0: four shards per worker slot)", job.ShardRows)
	}
	if objstore.IsRemote(job.Out) {
		return extractToStore(ctx, job, o)
	}
	release, err := outlock.Lock(job.Out)
	if err != nil {
		return nil, err
	}
	defer release()
	// A Ctrl-C stops the job, and the finished shards are kept.
	defer interrupt.Observe()()
	total, err := count(job)
	if err != nil {
		return nil, err
	}
	work := WorkDir(job.Out)
	if job.Extract.Restart {
		if err := removeOwned(work); err != nil {
			return nil, fmt.Errorf("--restart: %w", err)
		}
	}
	prev, err := loadRun(work)
	if err != nil {
		return nil, err
	}
	if prev != nil && !job.Extract.Resume {
		return nil, fmt.Errorf("%s holds the shards of an interrupted extraction into %s: rerun with --resume to continue it, or with --restart to discard it", work, job.Out)
	}
	st, err := plan(&job, total, prev, work)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		if done, err := complete(job); done != nil || err != nil {
			return done, err
		}
		if err := os.Mkdir(work, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if err := saveRun(work, st); err != nil {
			return nil, err
		}
	}
	specs := layout(job, total, func(i int) string { return filepath.Join(work, shardName(i)) })
	todo := unfinished(ctx, specs)
	if left, err := runShards(ctx, &job, specs, todo, prev != nil, o); err != nil {
		if prev == nil && !saved(work) {
			// Nothing of this run to resume (the job did not
			// start, or saved no rows): its folder goes.
			if rerr := removeOwned(work); rerr == nil {
				return nil, err
			}
		}
		return nil, shardsLeftError(ctx, err, len(specs)-len(left), len(specs), work)
	}
	dir := ShardDir(job.Out)
	m := &features.ShardManifest{Runner: o.Name(), EncoderSHA256: job.Extract.Meta.EncoderSHA256}
	for _, sp := range specs {
		f, err := features.Open(sp.Path, features.ReadOptions{})
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", sp.Index, err)
		}
		md := f.Metadata()
		if md.EncoderSHA256 != job.Extract.Meta.EncoderSHA256 || md.DataID != job.Extract.Meta.DataID {
			f.Close()
			return nil, fmt.Errorf("shard %d (%s) comes from another encoder or source than this run; rerun with --restart", sp.Index, sp.Path)
		}
		m.Shards = append(m.Shards, features.Shard{Path: filepath.ToSlash(filepath.Join(filepath.Base(dir), shardName(sp.Index))), Rows: f.Rows()})
		m.Rows += f.Rows()
		m.Dim = f.Dim()
		f.Close()
	}
	note, err := publish(work, dir, job.Out, m)
	if err != nil {
		return nil, err
	}
	return &ExtractResult{Out: job.Out, Shards: len(specs), Made: len(todo), Rows: m.Rows, Dim: m.Dim, Runner: o.Name(), Note: note}, nil
}

// plan settles a run's layout — the shard size, and the record a resume
// checks — from job, its total examples and the interrupted run prev
// (nil: none), whose layout a resume keeps and whose identity and source
// it must share; work names that run's folder in errors. It sets
// job.ShardRows.
func plan(job *ExtractJob, total int64, prev *runState, work string) (runState, error) {
	st := runState{Version: 1, Identity: job.Extract.Identity, Offset: job.Offset, Examples: total}
	if prev != nil {
		if diff := features.IdentityDiff(prev.Identity, st.Identity); diff != "" {
			return st, fmt.Errorf("cannot resume %s: this run differs from the interrupted one in %s; run it as before, or rerun with --restart to discard its shards", work, diff)
		}
		if prev.Offset != st.Offset || prev.Examples != st.Examples {
			return st, fmt.Errorf("cannot resume %s: it extracts %d examples from %d, this run %d from %d (the source changed); rerun with --restart", work, prev.Examples, prev.Offset, st.Examples, st.Offset)
		}
		if job.ShardRows == 0 {
			job.ShardRows = prev.ShardRows // the interrupted run's layout
		}
	}
	batch := int64(max(1, job.Extract.Batch))
	if job.ShardRows == 0 {
		// Four shards per worker slot, so that uneven shards even out.
		job.ShardRows = max(batch, (total+4*int64(max(1, job.Workers))-1)/(4*int64(max(1, job.Workers))))
	}
	// Whole encoder batches, and no more than the examples (a shard size
	// of 2⁶³−1 once overflowed into a negative one).
	job.ShardRows = (min(job.ShardRows, total) + batch - 1) / batch * batch
	st.ShardRows = job.ShardRows
	if n := (total + job.ShardRows - 1) / job.ShardRows; n > features.MaxShards {
		return st, fmt.Errorf("%d shards of %d examples; a manifest lists at most %d: raise --shard-rows to at least %d", n, job.ShardRows, features.MaxShards, (total+features.MaxShards-1)/features.MaxShards)
	}
	if prev != nil && prev.ShardRows != st.ShardRows {
		return st, fmt.Errorf("cannot resume %s: its shards hold %d examples each, --shard-rows asks %d; leave --shard-rows out, or rerun with --restart", work, prev.ShardRows, st.ShardRows)
	}
	return st, nil
}

// layout cuts the job's total examples into shards of job.ShardRows, the
// i-th written at path(i).
func layout(job ExtractJob, total int64, path func(int) string) []shardSpec {
	var specs []shardSpec
	for i, at := 0, job.Offset; at < job.Offset+total; i++ {
		sp := shardSpec{Index: i, Offset: at, Limit: min(job.ShardRows, job.Offset+total-at), Path: path(i)}
		specs = append(specs, sp)
		at += sp.Limit
	}
	return specs
}

// unfinished returns the shards not yet written whole (a finished
// shard's file, or on object storage its summary, is there).
func unfinished(ctx context.Context, specs []shardSpec) []shardSpec {
	var todo []shardSpec
	for _, sp := range specs {
		done := sp.Path
		if objstore.IsRemote(done) {
			done = summaryPath(done)
		}
		if ok, _ := objstore.Exists(ctx, done); !ok {
			todo = append(todo, sp)
		}
	}
	return todo
}

// runShards extracts the shards todo, those of specs not yet finished,
// as one pipeline: each a bundle's element, reshuffled so that runners
// spread them; a job that loses a worker process runs again for the
// shards of specs still unfinished (retryLost). resume says whether a
// shard continues the partial file an interrupted run left
// (encode.Extract keeps what it committed). When it fails it returns the
// shards of specs still unfinished.
func runShards(ctx context.Context, job *ExtractJob, specs, todo []shardSpec, resume bool, o Options) ([]shardSpec, error) {
	err := retryLost(ctx, "the unfinished shards", func() error {
		err := runPipeline(ctx, job, todo, resume, o)
		if err != nil {
			resume = true // a retry continues what the lost worker saved
			todo = unfinished(ctx, specs)
		}
		return err
	})
	return todo, err
}

// shardsLeftError is a failed extraction's error: the cause (or the
// interruption), how many shards are finished in where, and how to go on.
func shardsLeftError(ctx context.Context, err error, kept, total int, where string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %d of %d shards are finished in %s; rerun with --resume to continue", ErrInterrupted, kept, total, where)
	}
	return fmt.Errorf("%w; %d of %d shards are finished in %s: --resume continues them once the cause is fixed (a changed source starts over with --restart)", err, kept, total, where)
}

// runPipeline is one pipeline of runShards, over the shards todo.
func runPipeline(ctx context.Context, job *ExtractJob, todo []shardSpec, resume bool, o Options) error {
	if len(todo) == 0 {
		return nil
	}
	job.Extract.Resume, job.Extract.Restart = resume, false
	job.Extract.Progress = nil // (a writer does not travel)
	cfg, err := json.Marshal(job)
	if err != nil {
		return err
	}
	var elems []string
	for _, sp := range todo {
		b, _ := json.Marshal(sp)
		elems = append(elems, string(b))
	}
	p, s := pipeline()
	// Each shard emits its path across a fusion break (a reshuffle): a
	// stage without outputs makes Prism (v2.77) poll in a busy loop until
	// its bundle ends, which took a core from ONNX Runtime and made
	// extraction 2.6 times slower.
	done := beam.ParDo(s, &extractShardFn{Job: string(cfg)}, beam.Reshuffle(s, beam.CreateList(s, elems)))
	beam.ParDo0(s, discard, beam.Reshuffle(s, done))
	return execute(ctx, p, o)
}

// complete handles a run with no interrupted one to continue when an
// earlier run's output is there: with Resume and a manifest that reads,
// there is nothing to do (its result, no shard made); with Replace, the
// run goes ahead; otherwise it is refused.
func complete(job ExtractJob) (*ExtractResult, error) {
	_, merr := os.Stat(job.Out)
	_, derr := os.Lstat(ShardDir(job.Out))
	switch {
	case merr != nil && derr != nil, job.Replace:
		return nil, nil
	case job.Extract.Resume && merr == nil:
		f, err := features.Open(job.Out, features.ReadOptions{})
		if err != nil {
			return nil, fmt.Errorf("nothing to resume, and %w", err)
		}
		defer f.Close()
		return &ExtractResult{Out: job.Out, Shards: len(f.Shards()), Rows: f.Rows(), Dim: f.Dim()}, nil
	case merr == nil:
		return nil, fmt.Errorf("%s exists: pass --force to replace it", job.Out)
	}
	return nil, fmt.Errorf("%s exists (shards without the manifest %s): pass --force to replace it", ShardDir(job.Out), job.Out)
}

// ErrInterrupted is returned when the context is cancelled (Ctrl-C).
var ErrInterrupted = errors.New("interrupted")

func shardName(i int) string { return fmt.Sprintf("%05d.arrow", i) }

// saved reports whether a work folder holds rows a resume would keep: a
// finished shard, or a shard's partial with its saved state.
func saved(work string) bool {
	ents, _ := os.ReadDir(work)
	for _, e := range ents {
		if n := e.Name(); owned.MatchString(n) && (strings.HasSuffix(n, ".arrow") || strings.HasSuffix(n, ".partial.json")) {
			return true
		}
	}
	return false
}

func loadRun(work string) (*runState, error) {
	b, err := os.ReadFile(filepath.Join(work, runFile))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(work); serr == nil {
			return nil, fmt.Errorf("%s has no record of its run (%s): rerun with --restart to discard it", work, runFile)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st runState
	if err := json.Unmarshal(b, &st); err != nil || st.Version != 1 {
		return nil, fmt.Errorf("%s is damaged (%v): rerun with --restart to discard the interrupted extraction", filepath.Join(work, runFile), err)
	}
	return &st, nil
}

func saveRun(work string, st runState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(work, runFile), append(b, '\n'))
}

// owned matches the names Extract writes in a shard folder: shards, their
// partial, state and resume files, atomicfile's temporaries, the run
// record.
var owned = regexp.MustCompile(`^(\d{5}\.arrow(\.partial(\.json|\.old|\.held)?)?|run\.json|\.(\d{5}\.arrow(\.partial\.(json|held))?|run\.json)\.tmp-[0-9a-f]+)$`)

// removeOwned removes a shard folder that Extract wrote: the files it
// writes there, then the folder. A file of another name (or a folder) is
// never removed: it is named in the error and the folder stays.
func removeOwned(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !owned.MatchString(e.Name()) || e.IsDir() {
			return fmt.Errorf("%s holds %s, which dpfeat did not write; move it away first", dir, e.Name())
		}
	}
	for _, e := range ents {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return os.Remove(dir) // empty now: only what this code wrote was there
}

// publish makes the finished work folder the shard folder and writes the
// manifest. An earlier run's shard folder is set aside first and removed
// (its own files only) once the manifest names the new shards.
func publish(work, dir, out string, m *features.ShardManifest) (note string, err error) {
	if err := os.Remove(filepath.Join(work, runFile)); err != nil {
		return "", err
	}
	aside := ""
	if _, err := os.Lstat(dir); err == nil {
		if aside, err = os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".replaced-"); err != nil {
			return "", err
		}
		os.Remove(aside) // a fresh name for the rename
		if err := os.Rename(dir, aside); err != nil {
			return "", fmt.Errorf("set the earlier shards %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(work, dir); err != nil {
		if aside != "" {
			os.Rename(aside, dir)
		}
		return "", fmt.Errorf("publish the shards: %w", err)
	}
	if err := features.WriteShardManifest(out, m); err != nil {
		return "", err
	}
	if aside != "" {
		if err := removeOwned(aside); err != nil {
			return fmt.Sprintf("the earlier shard folder was kept as %s (%v)", aside, err), nil
		}
	}
	return "", nil
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
	if err := failShard(sp.Index); err != nil {
		return err
	}
	opt := f.job.Extract
	opt.Offset, opt.Limit, opt.Progress = sp.Offset, sp.Limit, nil
	if w := fault(sp.Path); w != nil {
		opt.Progress = w
	}
	opt.Identity = map[string]string{}
	for k, v := range f.job.Extract.Identity {
		opt.Identity[k] = v
	}
	opt.Identity["shard"] = fmt.Sprintf("%d: examples %d..%d", sp.Index, sp.Offset, sp.Offset+sp.Limit-1)
	var res *encode.ExtractResult
	if objstore.IsRemote(sp.Path) {
		res, err = extractObject(ctx, ds, sess, f.job, sp, opt)
	} else {
		var r encode.ExtractResult
		r, err = encode.Extract(ctx, ds, sess, encode.NewPreprocessor(f.job.Manifest.Input), sp.Path, opt)
		res = &r
	}
	if err != nil {
		return fmt.Errorf("shard %d (examples %d..%d): %w", sp.Index, sp.Offset, sp.Offset+sp.Limit-1, err)
	}
	// Progress: on Prism this process's stderr, on a remote runner the
	// worker's log.
	fmt.Fprintf(os.Stderr, "dpfeat: shard %d (examples %d..%d): %d rows in %.1f s\n", sp.Index, sp.Offset, sp.Offset+sp.Limit-1, res.Rows, res.Seconds)
	emit(sp.Path)
	return nil
}

// faultEnv injects a test's failure where a shard's first encoder batch
// reports progress (mid-shard, with rows encoded and none published):
//
//   - kill-once:PATH — the first worker to create PATH kills itself
//     (SIGKILL), as a cluster loses a machine; the file keeps the retry
//     and every other worker from doing the same;
//   - stall-after:N — once N shards are finished in the run's folder,
//     every shard still at work stops there until the process is killed:
//     a job still busy when its job server goes away;
//   - fail-shard:I — shard I fails before it starts (failShard), every
//     time: a job that fails with other shards finished, in-process.
const faultEnv = "DPFEAT_FAULT"

// failShard is faultEnv's fail-shard error for shard i (nil: no fault).
func failShard(i int) error {
	mode, arg, _ := strings.Cut(os.Getenv(faultEnv), ":")
	if mode == "fail-shard" && arg == strconv.Itoa(i) {
		return fmt.Errorf("shard %d: failed by %s=%s", i, faultEnv, os.Getenv(faultEnv))
	}
	return nil
}

// fault is faultEnv's progress writer for the shard at path (nil: no
// fault).
func fault(path string) io.Writer {
	mode, arg, _ := strings.Cut(os.Getenv(faultEnv), ":")
	switch mode {
	case "kill-once":
		return faultWriter(func() {
			if f, err := os.OpenFile(arg, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				f.Close()
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		})
	case "stall-after":
		if n, err := strconv.Atoi(arg); err == nil {
			return faultWriter(func() {
				if done, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "[0-9][0-9][0-9][0-9][0-9].arrow")); len(done) >= n {
					select {}
				}
			})
		}
	}
	return nil
}

type faultWriter func()

func (f faultWriter) Write(p []byte) (int, error) { f(); return len(p), nil }

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
	dev.ExactFloat32 = job.ExactFloat32
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

// discard consumes a stage's outputs — finished shards' paths, finished
// sweep jobs' IDs — whose results the driver reads from files. (The
// stage's output goes across a reshuffle first: without one, Prism polled
// in a busy loop for the whole of each bundle.)
func discard(string) {}

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&extractShardFn{})
	register.Function1x0(discard)
	register.Emitter1[string]()
	beam.RegisterType(reflect.TypeOf((*extractShardFn)(nil)).Elem())
}
