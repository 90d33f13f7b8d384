package features

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
	"strings"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
)

// ResumeOptions say how a resumable write treats an interrupted one.
type ResumeOptions struct {
	// Resume continues the interrupted write into the same output (its
	// rows are copied from the partial file); Restart discards it.
	// Without either, an interrupted write is an error that says which to
	// pass.
	Resume, Restart bool
	// Identity is what must be the same for a resume to continue a write
	// (the model's hash, the data, the flags): a mismatch is refused,
	// naming what differs.
	Identity map[string]string
	// Created is the creation time to record in a fresh write's metadata;
	// a resumed write keeps the interrupted one's, so that it produces
	// the same file as an uninterrupted run.
	Created string
	// Job names the work in messages ("extraction").
	Job string
}

// Resumable writes a feature file that survives interruption: rows go to
// OUT.partial, and each Commit makes the record batches written so far
// durable and records in OUT.partial.json how far the job got (the
// caller's progress, a JSON object of its own, beside the batch and row
// counts). An interrupted or failed run leaves both; a run with
// ResumeOptions.Resume continues from them, and Close publishes the
// complete file at OUT (atomically) and removes both. The destination
// only ever holds a complete file. It owns every OUT.partial* file, so a
// caller only feeds batches.
type Resumable struct {
	*Writer
	partial, state, held string
	st                   resumeState
	resumed              int64
	progress             json.RawMessage
	closed               bool
	// heldRows are the interrupted write's held rows (Held), and holding
	// whether this write has held rows since its last Commit.
	heldRows *heldRows
	holding  bool
}

// heldRows is OUT.partial.held: rows made durable before they end a
// record batch (Hold), after Base committed rows, with the caller's
// progress including them. It is gob, after its CRC-32 (IEEE, little
// endian).
type heldRows struct {
	Base     int64
	Batch    Batch
	Progress []byte
}

// resumeState is OUT.partial.json: the caller's progress fields beside
// these (one flat object, so files written before the caller's progress
// became opaque still read).
type resumeState struct {
	Version  int               `json:"version"`
	Identity map[string]string `json:"identity"`
	Created  string            `json:"created"`
	Batches  int               `json:"record_batches"`
	Rows     int64             `json:"rows"`
}

// PartialPaths returns the partial file and its state file for an output.
func PartialPaths(out string) (partial, state string) {
	return out + ".partial", out + ".partial.json"
}

// heldPath is where a resumable write of out holds rows (Hold).
func heldPath(out string) string { return out + ".partial.held" }

// CreateResumable starts, or with ro.Resume continues, a resumable feature
// file at out. meta.Created is set from ro.Created or the interrupted
// run's. Resumed reports the rows recovered and Progress the caller's
// progress at the last Commit.
func CreateResumable(out string, dim int, meta Metadata, wo WriterOptions, ro ResumeOptions) (*Resumable, error) {
	if ro.Job == "" {
		ro.Job = "write"
	}
	partial, state := PartialPaths(out)
	held := heldPath(out)
	r := &Resumable{partial: partial, state: state, held: held, st: resumeState{Version: 1, Identity: ro.Identity, Created: ro.Created}}
	if ro.Resume && ro.Restart {
		return nil, fmt.Errorf("--resume and --restart exclude each other")
	}
	old := partial + ".old"
	if ro.Restart {
		for _, p := range []string{partial, state, old, held} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("restart: %w", err)
			}
		}
	}
	copyFrom := ""
	prev, raw, lerr := loadState(state)
	switch {
	case lerr == nil && !ro.Resume:
		return nil, fmt.Errorf("%s holds %d rows of an interrupted %s into %s: rerun with --resume to continue it, or delete %s and %s to start over", partial, prev.Rows, ro.Job, out, partial, state)
	case lerr == nil:
		if diff := IdentityDiff(prev.Identity, ro.Identity); diff != "" {
			return nil, fmt.Errorf("cannot resume %s: this run differs from the interrupted one in %s; run it as before, or delete %s and %s to start over", partial, diff, partial, state)
		}
		r.st, r.progress, copyFrom = *prev, raw, old
		if _, serr := os.Stat(old); serr != nil {
			// (If .old exists, an earlier resume stopped while copying:
			// it is the intact source.)
			if err := os.Rename(partial, old); err != nil {
				return nil, fmt.Errorf("resume %s: %w", partial, err)
			}
		}
	case !errors.Is(lerr, os.ErrNotExist):
		return nil, fmt.Errorf("%w: rerun with --restart to discard the interrupted %s and start over", lerr, ro.Job)
	default:
		// A partial without state is a run stopped before its first
		// record batch was saved: nothing of it can be resumed, and the
		// caller holds the output's lock, so no other run is writing it.
		// It is removed only if it is a plain file this code writes (a
		// link planted there is removed as a link, never followed).
		if st, serr := os.Lstat(partial); serr == nil {
			if !st.Mode().IsRegular() && st.Mode()&os.ModeSymlink == 0 {
				return nil, fmt.Errorf("%s is not a file dpfeat wrote (%s); move it away", partial, st.Mode().Type())
			}
			if err := os.Remove(partial); err != nil {
				return nil, fmt.Errorf("discard %s (a run stopped before it saved any rows): %w", partial, err)
			}
		}
	}
	meta.Created = r.st.Created
	wo.Partial = partial
	w, err := Create(out, dim, meta, wo)
	if err != nil {
		return nil, err
	}
	r.Writer = w
	if copyFrom != "" {
		var rows int64
		var cerr error
		if r.st.Batches > 0 { // (a write that held rows before its first record batch has none to copy)
			rows, cerr = CopyPartial(copyFrom, r.st.Batches, w)
		}
		if cerr != nil {
			// --resume would fail again the same way: the new partial
			// goes; --restart (which the error names) discards the rest.
			w.Abort()
			return nil, fmt.Errorf("%w: the interrupted %s's saved rows are damaged; rerun with --restart to start over (its %d rows are lost)", cerr, ro.Job, r.st.Rows)
		}
		if err := w.Sync(); err != nil {
			w.Abort()
			return nil, err
		}
		os.Remove(copyFrom)
		r.resumed = rows
		if r.heldRows, err = loadHeld(held, rows); err != nil {
			w.Abort()
			return nil, fmt.Errorf("%w: rerun with --restart to start over (its %d rows are lost)", err, r.st.Rows)
		}
		if r.heldRows != nil {
			r.resumed += int64(r.heldRows.Batch.Rows())
		}
	} else {
		os.Remove(held) // a held file without its state: nothing to resume it from
	}
	return r, nil
}

// loadHeld reads the rows an interrupted write held after its base
// committed rows (nil when none, or when they follow another commit: a
// Commit that supersedes them removes the file after saving its state).
func loadHeld(path string, base int64) (*heldRows, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != crc32.ChecksumIEEE(b[4:]) {
		return nil, fmt.Errorf("%s is damaged (checksum)", path)
	}
	var h heldRows
	if err := gob.NewDecoder(bytes.NewReader(b[4:])).Decode(&h); err != nil {
		return nil, fmt.Errorf("%s is damaged: %v", path, err)
	}
	if h.Base != base {
		return nil, nil
	}
	return &h, nil
}

// Hold makes rows that do not end a record batch yet durable beside the
// partial file, with the caller's progress including them, so that an
// interruption loses only what came after: a resume returns them (Held)
// to be written again in the same record batch, and the file is the same
// as an uninterrupted run's. The next Commit supersedes what is held. b is
// every row since the last Commit.
func (r *Resumable) Hold(b Batch, progress any) error {
	p, err := json.Marshal(progress)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Write(make([]byte, 4))
	if err := gob.NewEncoder(&buf).Encode(heldRows{Base: r.Writer.Rows(), Batch: b, Progress: p}); err != nil {
		return err
	}
	data := buf.Bytes()
	binary.LittleEndian.PutUint32(data, crc32.ChecksumIEEE(data[4:]))
	if err := atomicfile.WriteBytes(r.held, data); err != nil {
		return fmt.Errorf("hold rows in %s: %w", r.held, err)
	}
	r.holding = true
	if r.st.Batches == 0 && r.Writer.NumBatches() == 0 {
		// Before the first record batch: the state says there is a
		// write to resume (its partial holds the schema alone).
		return r.Commit(nil)
	}
	return nil
}

// Held returns the rows the interrupted write held after its last Commit
// and decodes their progress — the caller's progress including them —
// into v; ok is false when it held none.
func (r *Resumable) Held(v any) (b Batch, ok bool, err error) {
	if r.heldRows == nil {
		return Batch{}, false, nil
	}
	if err := json.Unmarshal(r.heldRows.Progress, v); err != nil {
		return Batch{}, false, fmt.Errorf("%s: %w", r.held, err)
	}
	return r.heldRows.Batch, true, nil
}

// Resumed is the number of rows recovered from an interrupted write.
func (r *Resumable) Resumed() int64 { return r.resumed }

// Progress decodes the caller's progress at the interrupted write's last
// Commit into v (left as it is for a fresh write).
func (r *Resumable) Progress(v any) error {
	if r.progress == nil {
		return nil
	}
	if err := json.Unmarshal(r.progress, v); err != nil {
		return fmt.Errorf("%s: %w", r.state, err)
	}
	return nil
}

// Commit makes every row written so far durable and records it with the
// caller's progress (a struct or map that marshals to a JSON object). A
// crash after Commit returns loses nothing committed.
func (r *Resumable) Commit(progress any) error {
	if err := r.Writer.Sync(); err != nil {
		return err
	}
	r.st.Batches, r.st.Rows = r.Writer.NumBatches(), r.Writer.Rows()
	b, err := r.st.marshal(progress)
	if err == nil {
		err = atomicfile.WriteBytes(r.state, b)
	}
	if err != nil {
		return fmt.Errorf("save resume state %s: %w", r.state, err)
	}
	if r.holding && r.Writer.NumBatches() > 0 {
		os.Remove(r.held) // superseded: what it held is in the record batches now
		r.holding = false
	}
	return nil
}

// Close publishes the complete file at its destination and removes the
// partial files.
func (r *Resumable) Close() error {
	r.closed = true
	if err := r.Writer.Close(); err != nil {
		return err
	}
	os.Remove(r.state)
	os.Remove(r.held)
	return nil
}

// Stop ends an unfinished write: what was committed stays for a resume
// (kept reports whether anything was), and without a commit the partial
// files go.
func (r *Resumable) Stop() (kept bool) {
	if r.closed {
		return false
	}
	r.closed = true
	if r.st.Batches > 0 || r.holding {
		r.Writer.Suspend()
		return true
	}
	r.Writer.Abort()
	os.Remove(r.state)
	os.Remove(r.held)
	return false
}

// Partial is the partial file's path (for messages).
func (r *Resumable) Partial() string { return r.partial }

// marshal merges the state and the caller's progress into one object.
func (s resumeState) marshal(progress any) ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if progress != nil {
		b, err := json.Marshal(progress)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, fmt.Errorf("progress must marshal to a JSON object: %w", err)
		}
	}
	own, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var ownFields map[string]json.RawMessage
	if err := json.Unmarshal(own, &ownFields); err != nil {
		return nil, err
	}
	for k, v := range ownFields {
		fields[k] = v
	}
	return json.MarshalIndent(fields, "", "  ")
}

func loadState(path string) (*resumeState, json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var s resumeState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, nil, fmt.Errorf("%s is damaged (%v); delete it and the partial file to start over", path, err)
	}
	return &s, b, nil
}

// IdentityData is the identity key of the source examples' hash
// (Metadata.DataID): a resume of other examples is refused.
const IdentityData = "data identity"

// IdentityDiff names the keys on which two runs differ ("" when none):
// the one comparison of a run with the interrupted one it would resume.
func IdentityDiff(a, b map[string]string) string {
	var diff []string
	for k, v := range b {
		switch {
		case a[k] == v:
		case k == IdentityData:
			// A hash of the private examples: named, never printed.
			diff = append(diff, k+" (the source's examples changed)")
		case len(a[k]) > 40 || len(v) > 40:
			// (a manifest's JSON, a hash: the key says enough)
			diff = append(diff, k+" (changed)")
		default:
			diff = append(diff, fmt.Sprintf("%s (%q then, %q now)", k, a[k], v))
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, ", ")
}
