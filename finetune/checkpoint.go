package finetune

import (
	"encoding/base64"
	"fmt"
	"os"
	"strconv"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/models"
)

// Checkpoint is a fine-tuning run between steps: the phase in progress
// (2 or 3), its state, and the run's settings, which a resumed run must
// repeat exactly.
type Checkpoint struct {
	Phase    int
	State    State
	Settings string
	// Noise is a seeded noise source's state (accounting.NoiseState), so
	// that a resumed --seed run draws what the uninterrupted one would;
	// nil for secure noise (a resumed run draws fresh secure noise).
	Noise []byte
}

const checkpointFormat = "dpfeat.finetune.checkpoint.v1"

// SaveCheckpoint writes c atomically (parameters and momentum buffers as
// safetensors).
func SaveCheckpoint(path string, g *Graph, c Checkpoint) error {
	var ts []models.Tensor
	for i, p := range g.Params {
		ts = append(ts, models.Tensor{Name: "param/" + p.Name, Shape: p.Shape, Data: c.State.Params[i]})
		if c.State.Velocity != nil {
			ts = append(ts, models.Tensor{Name: "velocity/" + p.Name, Shape: p.Shape, Data: c.State.Velocity[i]})
		}
	}
	md := map[string]string{"format": checkpointFormat, "phase": strconv.Itoa(c.Phase),
		"step": strconv.Itoa(c.State.Step), "settings": c.Settings}
	if c.Noise != nil {
		md["noise"] = base64.StdEncoding.EncodeToString(c.Noise)
	}
	b, err := models.EncodeSafetensors(ts, md)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, b)
}

// LoadCheckpoint reads a checkpoint of graph g.
func LoadCheckpoint(path string, g *Graph) (Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read %s: %w", path, err)
	}
	ts, md, err := models.DecodeSafetensors(b)
	if err != nil || md["format"] != checkpointFormat {
		return Checkpoint{}, fmt.Errorf("read %s: not a dpfeat fine-tuning checkpoint", path)
	}
	var c Checkpoint
	c.Settings = md["settings"]
	if s, ok := md["noise"]; ok {
		if c.Noise, err = base64.StdEncoding.DecodeString(s); err != nil {
			return Checkpoint{}, fmt.Errorf("read %s: bad noise state", path)
		}
	}
	if c.Phase, err = strconv.Atoi(md["phase"]); err != nil || (c.Phase != 2 && c.Phase != 3) {
		return Checkpoint{}, fmt.Errorf("read %s: bad phase %q", path, md["phase"])
	}
	if c.State.Step, err = strconv.Atoi(md["step"]); err != nil || c.State.Step < 0 {
		return Checkpoint{}, fmt.Errorf("read %s: bad step %q", path, md["step"])
	}
	for _, p := range g.Params {
		t, ok := ts["param/"+p.Name]
		if !ok || len(t.Data) != p.Size {
			return Checkpoint{}, fmt.Errorf("read %s: parameter %q missing or of the wrong size", path, p.Name)
		}
		c.State.Params = append(c.State.Params, t.Data)
		if v, ok := ts["velocity/"+p.Name]; ok && len(v.Data) == p.Size {
			c.State.Velocity = append(c.State.Velocity, v.Data)
		}
	}
	if c.State.Velocity != nil && len(c.State.Velocity) != len(g.Params) {
		return Checkpoint{}, fmt.Errorf("read %s: momentum buffers incomplete", path)
	}
	return c, nil
}

// SaveParams writes trained parameters, named as the graph's inputs, with
// metadata (the privacy statement, the settings).
func SaveParams(path string, g *Graph, params [][]float32, metadata map[string]string) error {
	var ts []models.Tensor
	for i, p := range g.Params {
		ts = append(ts, models.Tensor{Name: p.Name, Shape: p.Shape, Data: params[i]})
	}
	b, err := models.EncodeSafetensors(ts, metadata)
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, b)
}
