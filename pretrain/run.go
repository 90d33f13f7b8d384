package pretrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/models"
)

// Config is a pretraining run's hyperparameters.
type Config struct {
	// Steps of Adam (Kingma and Ba 2015) at learning rate LR, on batches
	// of Batch images (each as two views: 2·Batch graph rows).
	Steps int     `json:"steps"`
	Batch int     `json:"batch"`
	LR    float64 `json:"lr"`
	// Temperature t and Lambda λ of the loss (AlignUniform; Wang and
	// Isola's defaults: 2 and 1).
	Temperature float64 `json:"temperature"`
	Lambda      float64 `json:"lambda"`
	// Augment makes the two views of an image (augment.Parse).
	Augment string `json:"augment"`
	// Seed keys the batches and views: a run and its resume take the same.
	Seed uint64 `json:"seed"`
}

// Check validates the hyperparameters.
func (c Config) Check() error {
	switch {
	case c.Steps < 1:
		return fmt.Errorf("steps %d; expected at least 1", c.Steps)
	case c.Batch < 2:
		return fmt.Errorf("batch %d; the loss contrasts images of a batch: expected at least 2", c.Batch)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("learning rate %v; expected a positive number", c.LR)
	case !(c.Temperature > 0) || !(c.Lambda >= 0):
		return fmt.Errorf("temperature %v and λ %v; expected t > 0 and λ ≥ 0", c.Temperature, c.Lambda)
	}
	_, err := augment.Parse(c.Augment)
	return err
}

// Adam's constants (Kingma and Ba's defaults).
const (
	beta1, beta2, adamEps = 0.9, 0.999, 1e-8
)

// State is a run between steps: the parameters, Adam's moment estimates
// and the steps done.
type State struct {
	Params [][]float32
	M, V   [][]float32
	Step   int
}

// Run pretrains through Graphs on Images (held in memory, decoded),
// preprocessed for the graphs' input by Prep.
type Run struct {
	Graphs *Graphs
	Images []features.Pixels
	Prep   *encode.Preprocessor
	Config Config
	// Checkpoint is written every Every steps and when the context ends;
	// Settings must match for a resume.
	Checkpoint string
	Every      int
	Settings   string
	// Progress, when set, is called after every step with the step done
	// and its loss.
	Progress func(step, steps int, l Loss)
	// Last, after Drive, is the mean loss of the last ≤ 50 steps.
	Last Loss
}

// ErrInterrupted is returned when the context ends the run; the
// checkpoint then holds it.
var ErrInterrupted = errors.New("interrupted")

// Drive runs the steps from params or, with resume, from the checkpoint,
// and returns the trained parameters.
func (r *Run) Drive(ctx context.Context, params [][]float32, resume bool) ([][]float32, error) {
	defer interrupt.Observe()() // a Ctrl-C saves a checkpoint at the step reached
	if err := r.Config.Check(); err != nil {
		return nil, err
	}
	if len(r.Images) < r.Config.Batch {
		return nil, fmt.Errorf("%d images for batches of %d", len(r.Images), r.Config.Batch)
	}
	spec, _ := augment.Parse(r.Config.Augment)
	st := &State{Params: params}
	if resume {
		var err error
		if st, err = r.load(); err != nil {
			return nil, err
		}
	}
	if st.M == nil {
		for _, p := range st.Params {
			st.M, st.V = append(st.M, make([]float32, len(p))), append(st.V, make([]float32, len(p)))
		}
	}
	g, B := r.Graphs, r.Config.Batch
	size := g.ImageSize()
	images := make([]float32, 2*B*size)
	emb, gemb := make([]float32, 2*B*g.Dim), make([]float32, 2*B*g.Dim)
	grads := make([][]float32, len(g.Params))
	for i, p := range g.Params {
		grads[i] = make([]float32, p.Size)
	}
	every := max(1, r.Every)
	var window []Loss
	for st.Step < r.Config.Steps {
		if err := ctx.Err(); err != nil {
			if serr := r.save(st); serr != nil {
				return nil, serr
			}
			return nil, fmt.Errorf("%w: %s holds the run at step %d; continue it with --resume", ErrInterrupted, r.Checkpoint, st.Step)
		}
		if err := r.views(spec, st.Step, images); err != nil {
			return nil, err
		}
		if err := g.Embed(st.Params, images, 2*B, emb); err != nil {
			return nil, err
		}
		if k := features.FirstNonFinite(emb); k >= 0 {
			return nil, fmt.Errorf("step %d: embedding value %v (lower --lr)", st.Step+1, emb[k])
		}
		l := AlignUniform(emb[:B*g.Dim], emb[B*g.Dim:], B, g.Dim, r.Config.Temperature, r.Config.Lambda, gemb[:B*g.Dim], gemb[B*g.Dim:])
		if err := g.VJP(st.Params, images, gemb, 2*B, grads); err != nil {
			return nil, err
		}
		st.Step++
		adam(st, grads, r.Config.LR)
		window = append(window, l)
		if len(window) > 50 {
			window = window[1:]
		}
		if r.Progress != nil {
			r.Progress(st.Step, r.Config.Steps, l)
		}
		if st.Step%every == 0 && st.Step < r.Config.Steps {
			if err := r.save(st); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range window {
		f := 1 / float64(len(window))
		r.Last.Total, r.Last.Align, r.Last.Uniform = r.Last.Total+f*l.Total, r.Last.Align+f*l.Align, r.Last.Uniform+f*l.Uniform
	}
	return st.Params, nil
}

// views fills images with step's batch: B images drawn without
// replacement (keyed by the seed and the step), their first views, then
// their second views, preprocessed.
func (r *Run) views(spec augment.Spec, step int, images []float32) error {
	B, size := r.Config.Batch, r.Graphs.ImageSize()
	rng := augment.Stream(r.Config.Seed, strconv.Itoa(step), "pretrain-batch")
	picked := map[int]int{} // a partial Fisher–Yates shuffle of 0..N−1
	at := func(i int) int {
		if v, ok := picked[i]; ok {
			return v
		}
		return i
	}
	n := len(r.Images)
	for b := 0; b < B; b++ {
		j := b + rng.IntN(n-b)
		vb, vj := at(b), at(j)
		picked[b], picked[j] = vj, vb
		idx := vj
		two := spec.Views(r.Images[idx], 2, r.Config.Seed+uint64(step)*0x9e3779b97f4a7c15, strconv.Itoa(idx))
		for v, px := range two {
			if err := r.Prep.Apply(px, images[(v*B+b)*size:(v*B+b+1)*size]); err != nil {
				return fmt.Errorf("image %d: %w", idx, err)
			}
		}
	}
	return nil
}

// adam takes one Adam step (bias-corrected moments, in float32 state).
func adam(st *State, grads [][]float32, lr float64) {
	c1, c2 := 1-math.Pow(beta1, float64(st.Step)), 1-math.Pow(beta2, float64(st.Step))
	for i, g := range grads {
		p, m, v := st.Params[i], st.M[i], st.V[i]
		for k, gk := range g {
			gg := float64(gk)
			mk := beta1*float64(m[k]) + (1-beta1)*gg
			vk := beta2*float64(v[k]) + (1-beta2)*gg*gg
			m[k], v[k] = float32(mk), float32(vk)
			p[k] = float32(float64(p[k]) - lr*(mk/c1)/(math.Sqrt(vk/c2)+adamEps))
		}
	}
}

const checkpointFormat = "dpfeat.pretrain.checkpoint.v1"

// save writes the state to the checkpoint, atomically.
func (r *Run) save(st *State) error {
	var ts []models.Tensor
	for i, p := range r.Graphs.Params {
		ts = append(ts, models.Tensor{Name: "param/" + p.Name, Shape: p.Shape, Data: st.Params[i]},
			models.Tensor{Name: "m/" + p.Name, Shape: p.Shape, Data: st.M[i]},
			models.Tensor{Name: "v/" + p.Name, Shape: p.Shape, Data: st.V[i]})
	}
	b, err := models.EncodeSafetensors(ts, map[string]string{"format": checkpointFormat, "step": strconv.Itoa(st.Step), "settings": r.Settings})
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", r.Checkpoint, err)
	}
	return atomicfile.WriteBytes(r.Checkpoint, b)
}

// load reads the checkpoint of a run of the same settings.
func (r *Run) load() (*State, error) {
	b, err := os.ReadFile(r.Checkpoint)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	ts, md, err := models.DecodeSafetensors(b)
	if err != nil || md["format"] != checkpointFormat {
		return nil, fmt.Errorf("resume: %s is not a dpfeat pretraining checkpoint", r.Checkpoint)
	}
	if md["settings"] != r.Settings {
		return nil, fmt.Errorf("resume: %s was written by a run with other settings (graphs, data or hyperparameters): run it as before, or start over without --resume", r.Checkpoint)
	}
	st := &State{}
	if st.Step, err = strconv.Atoi(md["step"]); err != nil || st.Step < 0 || st.Step > r.Config.Steps {
		return nil, fmt.Errorf("resume: %s: bad step %q", r.Checkpoint, md["step"])
	}
	for _, p := range r.Graphs.Params {
		for _, part := range []struct {
			prefix string
			to     *[][]float32
		}{{"param/", &st.Params}, {"m/", &st.M}, {"v/", &st.V}} {
			t, ok := ts[part.prefix+p.Name]
			if !ok || len(t.Data) != p.Size {
				return nil, fmt.Errorf("resume: %s: %s%s missing or of the wrong size", r.Checkpoint, part.prefix, p.Name)
			}
			*part.to = append(*part.to, t.Data)
		}
	}
	return st, nil
}

// Settings describes a run for its checkpoint: what a resume must repeat.
func Settings(embed, vjp, data string, images int, c Config) string {
	cj, _ := json.Marshal(c)
	return fmt.Sprintf("embed=%s vjp=%s data=%s images=%d config=%s", embed, vjp, data, images, cj)
}
