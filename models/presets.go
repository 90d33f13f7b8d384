package models

import (
	"fmt"
	"sort"
	"strings"
)

// ImageNet normalisation, as timm and torchvision use it.
var (
	imagenetMean = []float64{0.485, 0.456, 0.406}
	imagenetStd  = []float64{0.229, 0.224, 0.225}
	// OpenAI CLIP's normalisation.
	clipMean = []float64{0.48145466, 0.4578275, 0.40821073}
	clipStd  = []float64{0.26862954, 0.26130258, 0.27577711}
)

// presets are manifests for common exports made with models/export_encoder.py
// (input "pixel_values", NCHW; output "features" or the raw hidden states).
// Their preprocessing follows the eval transforms of the timm/torchvision
// configs: resize the shorter side then center-crop, PIL-style rounding.
var presets = map[string]Manifest{
	// torchvision ResNet-50 (IMAGENET1K_V2): resize 232, crop 224, bilinear.
	"torchvision-resnet50": {Name: "torchvision-resnet50", Input: Input{Name: "pixel_values", Layout: "NCHW", Channels: 3, Height: 224, Width: 224,
		Mean: imagenetMean, Std: imagenetStd, Resize: "bilinear", Crop: "center", ResizeSize: 232, RoundAfterResize: true},
		Output: Output{Name: "features", Dim: 2048, Pool: PoolNone}},
	// torchvision ResNet-18/34 (IMAGENET1K_V1): resize 256, crop 224.
	"torchvision-resnet18": {Name: "torchvision-resnet18", Input: Input{Name: "pixel_values", Layout: "NCHW", Channels: 3, Height: 224, Width: 224,
		Mean: imagenetMean, Std: imagenetStd, Resize: "bilinear", Crop: "center", ResizeSize: 256, RoundAfterResize: true},
		Output: Output{Name: "features", Dim: 512, Pool: PoolNone}},
	// timm vit_base_patch16_224.augreg2_in21k_ft_in1k: bicubic, crop_pct 0.9,
	// mean/std 0.5.
	"timm-vit-base-patch16-224": {Name: "timm-vit-base-patch16-224", Input: Input{Name: "pixel_values", Layout: "NCHW", Channels: 3, Height: 224, Width: 224,
		Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.5, 0.5, 0.5}, Resize: "bicubic", Crop: "center", CropPct: 0.9, RoundAfterResize: true},
		Output: Output{Name: "features", Dim: 768, Pool: PoolNone}},
	// timm vit_large_patch16_224 (ImageNet-21k fine-tuned): same transform, D = 1024.
	"timm-vit-large-patch16-224": {Name: "timm-vit-large-patch16-224", Input: Input{Name: "pixel_values", Layout: "NCHW", Channels: 3, Height: 224, Width: 224,
		Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.5, 0.5, 0.5}, Resize: "bicubic", Crop: "center", CropPct: 0.9, RoundAfterResize: true},
		Output: Output{Name: "features", Dim: 1024, Pool: PoolNone}},
	// timm ResNet-50 (a1_in1k): bicubic, crop_pct 0.95, ImageNet mean/std.
	"timm-resnet50": {Name: "timm-resnet50", Input: Input{Name: "pixel_values", Layout: "NCHW", Channels: 3, Height: 224, Width: 224,
		Mean: imagenetMean, Std: imagenetStd, Resize: "bicubic", Crop: "center", CropPct: 0.95, RoundAfterResize: true},
		Output: Output{Name: "features", Dim: 2048, Pool: PoolNone}},
	// A ViT exported with its last hidden state [N, 197, 768]: CLS token.
	"vit-hidden-state-cls": {Name: "vit-hidden-state-cls", Input: Input{Name: "pixel_values", Layout: "NCHW", Channels: 3, Height: 224, Width: 224,
		Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.5, 0.5, 0.5}, Resize: "bicubic", Crop: "center", CropPct: 0.9, RoundAfterResize: true},
		Output: Output{Name: "last_hidden_state", Pool: PoolCLS}},
	// OpenAI CLIP ViT-B/16 image tower: bicubic, resize 224, crop 224.
	"clip-vit-b16": {Name: "clip-vit-b16", Input: Input{Name: "pixel_values", Layout: "NCHW", Channels: 3, Height: 224, Width: 224,
		Mean: clipMean, Std: clipStd, Resize: "bicubic", Crop: "center", ResizeSize: 224, RoundAfterResize: true},
		Output: Output{Name: "features", Dim: 512, Pool: PoolNone}},
}

// Preset returns a copy of a named preset manifest.
func Preset(name string) (*Manifest, error) {
	p, ok := presets[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("unknown preset %q; known: %s", name, strings.Join(PresetNames(), ", "))
	}
	m := p
	m.Input.Mean = append([]float64(nil), p.Input.Mean...)
	m.Input.Std = append([]float64(nil), p.Input.Std...)
	if err := m.Normalize(); err != nil {
		panic(fmt.Sprintf("models: preset %s is invalid: %v", name, err))
	}
	return &m, nil
}

// PresetNames lists the presets.
func PresetNames() []string {
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
