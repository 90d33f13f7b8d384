package finetune

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dpfeat/dpfeat/accounting"
)

// Run is a DP-RandP run of the private phases: Phase II (the head) then
// Phase III (every parameter), with checkpoints so that an interrupted run
// continues where it stopped.
type Run struct {
	Graph  *Graph
	Data   Data
	Phase2 Phase
	Phase3 Phase
	// Noise is the run's noise source; Resume may replace a seeded one by
	// the stream a checkpoint saved.
	Noise accounting.Noise
	// Checkpoint is the checkpoint file, written every Every steps, at
	// an interruption, and removed by the caller once the output is
	// written; Settings must match for a resume.
	Checkpoint string
	Every      int
	Settings   string
	// Progress receives a line at most every 2 s and at the end of a phase:
	// the phase, the step and the norm of the step's noisy gradient (the
	// loss on private examples is never released).
	Progress func(phase string, step, steps int, noisyNorm float64)
	// StepSeconds, after Drive, is each phase's (II, III) mean wall time
	// per step this run took (0 for a phase it did not run).
	StepSeconds [2]float64
}

// ErrInterrupted is returned when the context ends a phase; the
// checkpoint then holds the run.
var ErrInterrupted = errors.New("interrupted")

// Drive runs the phases from the start (params) or, with resume, from the
// checkpoint, and returns the trained parameters.
func (r *Run) Drive(ctx context.Context, params [][]float32, resume bool) ([][]float32, error) {
	phase, st := 2, &State{Params: params}
	if r.Phase2.Steps == 0 {
		phase = 3
	}
	if resume {
		ck, err := LoadCheckpoint(r.Checkpoint, r.Graph)
		if err != nil {
			return nil, err
		}
		if ck.Settings != r.Settings {
			return nil, fmt.Errorf("%s was written by a run with other settings (files, data, budget or phases): it cannot be resumed with these", r.Checkpoint)
		}
		phase, st = ck.Phase, &ck.State
		if ck.Noise != nil && r.Noise.Seeded() {
			// the seeded stream where the interrupted run left it
			if r.Noise, err = accounting.RestoreNoise(ck.Noise); err != nil {
				return nil, fmt.Errorf("%s: %w", r.Checkpoint, err)
			}
		}
	}
	// A checkpoint holds a seeded stream's state too, so that a resumed
	// --seed run equals the uninterrupted one.
	save := func(num int, s *State) error {
		ck := Checkpoint{Phase: num, State: *s, Settings: r.Settings}
		if r.Noise.Seeded() {
			ck.Noise, _ = accounting.NoiseState(r.Noise)
		}
		return SaveCheckpoint(r.Checkpoint, r.Graph, ck)
	}
	every := max(1, r.Every)
	last := time.Now()
	run := func(p Phase, num int) error {
		err := p.Run(ctx, r.Graph, r.Data, st, RunOptions{Noise: r.Noise, AfterStep: func(s *State, noisyNorm float64) error {
			if r.Progress != nil && (time.Since(last) > 2*time.Second || s.Step == p.Steps) {
				r.Progress(p.Name, s.Step, p.Steps, noisyNorm)
				last = time.Now()
			}
			if s.Step%every == 0 && s.Step < p.Steps {
				return save(num, s)
			}
			return nil
		}})
		if errors.Is(err, context.Canceled) {
			if serr := save(num, st); serr != nil {
				return serr
			}
			return fmt.Errorf("%w: %s holds the run; continue it with --resume", ErrInterrupted, r.Checkpoint)
		}
		return err
	}
	timed := func(p Phase, num int) error {
		t0, from := time.Now(), st.Step
		err := run(p, num)
		if st.Step > from {
			r.StepSeconds[num-2] = time.Since(t0).Seconds() / float64(st.Step-from)
		}
		return err
	}
	if phase == 2 {
		if err := timed(r.Phase2, 2); err != nil {
			return nil, err
		}
		st.Step, st.Velocity = 0, nil
	}
	if r.Phase3.Steps > 0 {
		if err := timed(r.Phase3, 3); err != nil {
			return nil, err
		}
	}
	return st.Params, nil
}

// PhaseAt names the phase and step a checkpoint resumes at.
func PhaseAt(path string, g *Graph) (string, int, error) {
	ck, err := LoadCheckpoint(path, g)
	if err != nil {
		return "", 0, err
	}
	return map[int]string{2: "II", 3: "III"}[ck.Phase], ck.State.Step, nil
}
