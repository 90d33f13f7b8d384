package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/internal/objstore"
)

// A distributed extraction into object storage (extract --runner with
// --out gs://bucket/x/train.json; package objstore) cannot publish its
// shards by renaming a folder: an object store has neither. Its layout:
//
//	gs://bucket/x/train.json                      the manifest (written last)
//	gs://bucket/x/train.shards/run.json           the run in progress, if any
//	gs://bucket/x/train.shards/GEN/00000.arrow    a shard of run GEN
//	gs://bucket/x/train.shards/GEN/00000.arrow.json   its summary
//
// Each run writes its shards under a generation of its own (GEN, 16 hex
// digits drawn when it starts), so no run ever overwrites a shard that a
// manifest names. A worker extracts its shard into a local file, uploads
// it (an object appears whole when its upload completes, or not at all),
// then writes its summary: a shard is finished when its summary is there.
// When every shard is, the manifest — one object, replaced whole — is the
// commit point: before it is written, readers see the earlier dataset (or
// none); after it, the new one. Only then are run.json and the earlier
// manifest's shards removed, and only objects whose names this code
// writes.
//
// An interrupted run leaves run.json and its finished shards: --resume
// continues it (a shard cut off mid-way is extracted again whole; on a
// local disk it would continue its partial file), --restart discards it.
// No lock guards the manifest against a second run at once, as a local
// file's lock does: object stores offer none through Beam's file
// systems.

// shardSummary is what a worker records of a finished shard beside it,
// for the driver to write the manifest without reading the shard.
type shardSummary struct {
	Rows          int64  `json:"rows"`
	Dim           int    `json:"dim"`
	Bytes         int64  `json:"bytes"`
	EncoderSHA256 string `json:"encoder_sha256"`
	DataID        string `json:"data_id"`
}

// maxSummaryBytes bounds a summary's and a run record's JSON.
const maxSummaryBytes = 1 << 16

func summaryPath(shard string) string { return shard + ".json" }

// generation matches a run's generation (ownedObject's GEN).
var generation = regexp.MustCompile(`^[0-9a-f]{16}$`)

// ownedObject matches the names, below the shard folder, of the objects
// extractToStore writes: a generation's shards and summaries.
var ownedObject = regexp.MustCompile(`^[0-9a-f]{16}/\d{5}\.arrow(\.json)?$`)

// extractToStore is Extract for a manifest on object storage.
func extractToStore(ctx context.Context, job ExtractJob, o Options) (*ExtractResult, error) {
	if err := objstore.CheckName(job.Out); err != nil {
		return nil, err
	}
	defer interrupt.Observe()()
	total, err := count(job)
	if err != nil {
		return nil, err
	}
	dir := ShardDir(job.Out)
	record := objstore.Join(dir, runFile)
	if job.Extract.Restart {
		if err := discardRun(ctx, dir); err != nil {
			return nil, fmt.Errorf("--restart: %w", err)
		}
	}
	prev, err := loadRemoteRun(ctx, record)
	if err != nil {
		return nil, err
	}
	if prev != nil && !job.Extract.Resume {
		return nil, fmt.Errorf("%s records an interrupted extraction into %s: rerun with --resume to continue it, or with --restart to discard it", record, job.Out)
	}
	where := dir
	if prev != nil {
		where = objstore.Join(dir, prev.Generation)
	}
	st, err := plan(&job, total, prev, where)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		if done, err := completeObject(ctx, job); done != nil || err != nil {
			return done, err
		}
		var g [8]byte
		rand.Read(g[:])
		st.Generation = hex.EncodeToString(g[:])
		if err := saveRemoteRun(ctx, record, st); err != nil {
			return nil, err
		}
	} else {
		st.Generation = prev.Generation
	}
	gen := objstore.Join(dir, st.Generation)
	specs := layout(job, total, func(i int) string { return objstore.Join(gen, shardName(i)) })
	todo := unfinished(ctx, specs)
	if left, err := runShards(ctx, &job, specs, todo, false, o); err != nil {
		if prev == nil && len(left) == len(specs) {
			// Nothing of this run to resume: its record goes.
			if rerr := discardRun(ctx, dir); rerr == nil {
				return nil, err
			}
		}
		return nil, shardsLeftError(ctx, err, len(specs)-len(left), len(specs), gen)
	}
	m := &features.ShardManifest{Runner: o.Name(), EncoderSHA256: job.Extract.Meta.EncoderSHA256}
	for _, sp := range specs {
		s, err := readSummary(ctx, sp.Path)
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", sp.Index, err)
		}
		if s.EncoderSHA256 != job.Extract.Meta.EncoderSHA256 || s.DataID != job.Extract.Meta.DataID {
			return nil, fmt.Errorf("shard %d (%s) comes from another encoder or source than this run; rerun with --restart", sp.Index, sp.Path)
		}
		if n, err := objstore.Size(ctx, sp.Path); err != nil || n != s.Bytes {
			return nil, fmt.Errorf("shard %d (%s) holds %d bytes, its summary says %d (%v): rerun with --restart", sp.Index, sp.Path, n, s.Bytes, err)
		}
		m.Shards = append(m.Shards, features.Shard{Path: objstore.Base(dir) + "/" + st.Generation + "/" + shardName(sp.Index), Rows: s.Rows})
		m.Rows += s.Rows
		m.Dim = s.Dim
	}
	var earlier *features.ShardManifest
	if ok, _ := objstore.Exists(ctx, job.Out); ok {
		earlier, _ = features.ReadShardManifest(job.Out) // (a damaged one names nothing to remove)
	}
	if err := features.WriteShardManifest(job.Out, m); err != nil {
		return nil, err
	}
	// Committed: what follows only tidies.
	note := ""
	if err := objstore.Remove(ctx, record); err != nil {
		note = fmt.Sprintf("%s was not removed (%v): remove it before the next run into %s", record, err, job.Out)
	}
	if earlier != nil {
		if err := removeShards(ctx, dir, earlier, m); err != nil {
			note = fmt.Sprintf("the earlier manifest's shards were not all removed (%v)", err)
		}
	}
	return &ExtractResult{Out: job.Out, Shards: len(specs), Made: len(todo), Rows: m.Rows, Dim: m.Dim, Runner: o.Name(), Note: note}, nil
}

// completeObject is complete for a manifest on object storage.
func completeObject(ctx context.Context, job ExtractJob) (*ExtractResult, error) {
	there, err := objstore.Exists(ctx, job.Out)
	switch {
	case err != nil:
		return nil, err
	case !there, job.Replace:
		return nil, nil
	case job.Extract.Resume:
		m, err := features.ReadShardManifest(job.Out)
		if err != nil {
			return nil, fmt.Errorf("nothing to resume, and %w", err)
		}
		return &ExtractResult{Out: job.Out, Shards: len(m.Shards), Rows: m.Rows, Dim: m.Dim}, nil
	}
	return nil, fmt.Errorf("%s exists: pass --force to replace it", job.Out)
}

func loadRemoteRun(ctx context.Context, record string) (*runState, error) {
	b, err := objstore.ReadFile(ctx, record, maxSummaryBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st runState
	if err := json.Unmarshal(b, &st); err != nil || st.Version != 1 || !generation.MatchString(st.Generation) {
		return nil, fmt.Errorf("%s is damaged (%v): rerun with --restart to discard the interrupted extraction", record, err)
	}
	return &st, nil
}

func saveRemoteRun(ctx context.Context, record string, st runState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return objstore.WriteFile(ctx, record, append(b, '\n'))
}

// discardRun removes the interrupted run recorded in the shard folder
// dir, if any: its generation's shards and summaries, then its record.
func discardRun(ctx context.Context, dir string) error {
	record := objstore.Join(dir, runFile)
	b, err := objstore.ReadFile(ctx, record, maxSummaryBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var st runState
	if json.Unmarshal(b, &st) == nil && generation.MatchString(st.Generation) {
		gen := objstore.Join(dir, st.Generation)
		names, err := objstore.List(ctx, gen, "*")
		if err != nil {
			return err
		}
		for _, n := range names {
			if rel := strings.TrimPrefix(n, dir+"/"); ownedObject.MatchString(rel) {
				if err := objstore.Remove(ctx, n); err != nil {
					return err
				}
			}
		}
	}
	return objstore.Remove(ctx, record)
}

// removeShards removes the shards (and their summaries) that the earlier
// manifest names and the new one does not, where their names are ones
// extractToStore writes below dir.
func removeShards(ctx context.Context, dir string, earlier, now *features.ShardManifest) error {
	keep := map[string]bool{}
	for _, s := range now.Shards {
		keep[s.Path] = true
	}
	var first error
	for _, s := range earlier.Shards {
		rel, ok := strings.CutPrefix(s.Path, objstore.Base(dir)+"/")
		if keep[s.Path] || !ok || !ownedObject.MatchString(rel) {
			continue
		}
		for _, p := range []string{objstore.Join(dir, rel), summaryPath(objstore.Join(dir, rel))} {
			if err := objstore.Remove(ctx, p); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func readSummary(ctx context.Context, shard string) (*shardSummary, error) {
	b, err := objstore.ReadFile(ctx, summaryPath(shard), maxSummaryBytes)
	if err != nil {
		return nil, err
	}
	var s shardSummary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): rerun with --restart", summaryPath(shard), err)
	}
	return &s, nil
}

// extractObject is a worker's extraction of the shard sp into object
// storage: into a local file in a folder of its own (removed after,
// whatever happens), uploaded whole, then its summary written — the
// shard's mark of being finished.
func extractObject(ctx context.Context, ds features.Dataset, sess *encode.Session, job ExtractJob, sp shardSpec, opt encode.ExtractOptions) (*encode.ExtractResult, error) {
	tmp, err := os.MkdirTemp("", "dpfeat-shard-")
	if err != nil {
		return nil, err
	}
	defer interrupt.Temporary(tmp)()
	defer os.RemoveAll(tmp) // made just above, for this shard alone
	local := filepath.Join(tmp, shardName(sp.Index))
	opt.Resume = false // (an interrupted shard's partial file was another process's)
	res, err := encode.Extract(ctx, ds, sess, encode.NewPreprocessor(job.Manifest.Input), local, opt)
	if err != nil {
		return nil, err
	}
	f, err := features.Open(local, features.ReadOptions{})
	if err != nil {
		return nil, err
	}
	md := f.Metadata()
	s := shardSummary{Rows: f.Rows(), Dim: f.Dim(), EncoderSHA256: md.EncoderSHA256, DataID: md.DataID}
	f.Close()
	st, err := os.Stat(local)
	if err != nil {
		return nil, err
	}
	s.Bytes = st.Size()
	if err := objstore.Put(ctx, local, sp.Path); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(s)
	if err := objstore.WriteFile(ctx, summaryPath(sp.Path), append(b, '\n')); err != nil {
		return nil, err
	}
	return &res, nil
}
