package features

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Column names of a feature file (docs/formats.md).
const (
	ColFeatures = "features"
	ColLabel    = "label"
	ColID       = "id"
	// ColExample names, in a multi-view file (Metadata.Views), the private
	// example each row was made from: the privacy unit the methods group by.
	ColExample = "example"
	// ColMixLabel and ColMixLambda, in a multi-view file with mixups with
	// public images (Views.MixDiff), give each such row a soft label:
	// λ·label + (1 − λ)·mix_label, λ = mix_lambda on the example's side
	// (DP-Mix_Diff). Null in the example's other rows.
	ColMixLabel  = "mix_label"
	ColMixLambda = "mix_lambda"
)

// Schema metadata keys of a feature file. The first six are the SPEC's; the
// others are dpfeat's extensions.
const (
	MetaVersion       = "dpfeat.version"
	MetaEncoderSHA256 = "dpfeat.encoder.sha256"
	MetaEncoderName   = "dpfeat.encoder.name"
	MetaClasses       = "dpfeat.classes"
	MetaSource        = "dpfeat.source"
	MetaCreated       = "dpfeat.created"
	// MetaSubset records how a file was derived from another (a validation
	// split, an imbalanced subset): a JSON object, see Derivation.
	MetaSubset = "dpfeat.subset"
	// MetaDataID is the identity of the source data the rows come from
	// (DataIdentity): extraction with any encoder of the same examples
	// gives the same identity, and split and imbalance keep it, so that a
	// budget ledger keyed by it covers every file derived from the data.
	MetaDataID = "dpfeat.data_id"
	// MetaViews marks a multi-view file: several rows (augmented views,
	// mixes) per private example, named by the example column. A JSON
	// object, see Views.
	MetaViews = "dpfeat.views"
	// MetaIDs says how the rows' ids were made: IDsOfExamples for an
	// extraction whose ids belong to the examples (content ids for
	// positional sources, #36); absent in files extracted before.
	MetaIDs = "dpfeat.ids"
	// MetaBasis and MetaBasisSHA256 are the encoder's basis features
	// (models.Basis) as extract found them: an absolute path and the
	// file's hash, for `fit --method auto` (train.Fit).
	MetaBasis       = "dpfeat.encoder.basis"
	MetaBasisSHA256 = "dpfeat.encoder.basis.sha256"
	// MetaBasisSource says where the basis came from: the manifest's
	// source, or for a synthetic basis (package synthbasis) its
	// "synthetic: …" description; absent in files extracted before.
	MetaBasisSource = "dpfeat.encoder.basis.source"
)

// Views describes a multi-view file: how many rows each private example
// gave and how they were made (package augment).
type Views struct {
	// Views is the number of augmented views per example (K_base).
	Views int `json:"views"`
	// Augment is the augmentation spec (augment.Parse).
	Augment string `json:"augment"`
	// MixSelf is the number of self-mixups per example (K_self), with
	// λ ~ Beta(MixAlpha, MixAlpha).
	MixSelf  int     `json:"mix_self,omitempty"`
	MixAlpha float64 `json:"mix_alpha,omitempty"`
	// Seed keys the augmentation streams (not a privacy mechanism).
	Seed uint64 `json:"seed"`
	// MixDiff is the number of mixups with public images per example
	// (DP-Mix_Diff, soft labels), from MixWith (assumed public).
	MixDiff int    `json:"mix_diff,omitempty"`
	MixWith string `json:"mix_with,omitempty"`
}

// Unit says, for a guarantee, what the rows of one example are: its views
// and mixes, one privacy unit.
func (v *Views) Unit() string {
	s := fmt.Sprintf("privacy unit: the example, as %d augmented views (%s)", v.Views, v.Augment)
	if v.MixSelf > 0 {
		s += fmt.Sprintf(" and %d self-mixups (λ ~ Beta(%g, %g))", v.MixSelf, v.MixAlpha, v.MixAlpha)
	}
	if v.MixDiff > 0 {
		s += fmt.Sprintf(" and %d mixups with the public images %s (soft labels, λ ~ Beta(%g, %g))", v.MixDiff, v.MixWith, v.MixAlpha, v.MixAlpha)
	}
	return s + " averaged before clipping"
}

// Unlabeled is the label of an example without one (a null label in the
// file), as in public data for DPPL-Public.
const Unlabeled int32 = -1

// Metadata is the schema metadata of a feature file.
type Metadata struct {
	Version       string
	EncoderSHA256 string
	EncoderName   string
	// Classes are the class names; label i names Classes[i]. Empty when the
	// file has no labels at all.
	Classes []string
	Source  string
	Created string
	// Subset, when set, says how the file was derived from another.
	Subset *Derivation
	// DataID is the source data's identity (MetaDataID), "" when unknown.
	DataID string
	// Views, when set, makes the file multi-view (MetaViews): its rows
	// carry the example column.
	Views *Views
	// IDs is MetaIDs: IDsOfExamples, or "" for a file whose extraction
	// did not say.
	IDs string
	// Basis and BasisSHA256 are MetaBasis and MetaBasisSHA256: the
	// encoder's public basis features (its manifest's, or the synthetic
	// one extract makes when the manifest names none), "" for none.
	Basis, BasisSHA256 string
	// BasisSource is MetaBasisSource.
	BasisSource string
	// Extra holds any other keys, kept as they are.
	Extra map[string]string
}

// Derivation records how a feature file was derived from another, so that a
// result can say which examples it saw.
type Derivation struct {
	// Kind is "validation-split" or "imbalanced".
	Kind string `json:"kind"`
	// From is the source file's dpfeat.source and path.
	From string `json:"from"`
	Seed uint64 `json:"seed"`
	// Part is "train" or "validation" for a split.
	Part     string  `json:"part,omitempty"`
	Fraction float64 `json:"fraction,omitempty"`
	// ImbalanceRatio and Profile describe an imbalanced subset.
	ImbalanceRatio float64 `json:"imbalance_ratio,omitempty"`
	Profile        string  `json:"profile,omitempty"`
	// Counts are the per-class example counts of the result.
	Counts []int64 `json:"counts,omitempty"`
}

func (m Metadata) arrow() arrow.Metadata {
	kv := map[string]string{}
	for k, v := range m.Extra {
		kv[k] = v
	}
	set := func(k, v string) {
		if v != "" {
			kv[k] = v
		}
	}
	set(MetaVersion, m.Version)
	set(MetaEncoderSHA256, m.EncoderSHA256)
	set(MetaEncoderName, m.EncoderName)
	set(MetaSource, m.Source)
	set(MetaCreated, m.Created)
	set(MetaDataID, m.DataID)
	set(MetaIDs, m.IDs)
	set(MetaBasis, m.Basis)
	set(MetaBasisSHA256, m.BasisSHA256)
	set(MetaBasisSource, m.BasisSource)
	classes := m.Classes
	if classes == nil {
		classes = []string{}
	}
	b, _ := json.Marshal(classes) // a []string always marshals
	kv[MetaClasses] = string(b)
	if m.Subset != nil {
		b, _ := json.Marshal(m.Subset)
		kv[MetaSubset] = string(b)
	}
	if m.Views != nil {
		b, _ := json.Marshal(m.Views)
		kv[MetaViews] = string(b)
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = kv[k]
	}
	return arrow.NewMetadata(keys, vals)
}

// IDsOfExamples is MetaIDs' value for ids that belong to the examples.
const IDsOfExamples = "examples"

// positionalSources are the sources.Source() prefixes whose examples
// dpfeat named by position before content ids.
var positionalSources = []string{"IDX ", "CIFAR-", "Hugging Face "}

// PositionalIDs reports whether a file's ids may be positions in its
// source: extracted from IDX, CIFAR or Hugging Face by a dpfeat that did
// not yet name examples by their content (no MetaIDs). Removing one image
// from such a source renamed every later one.
func (m Metadata) PositionalIDs() bool {
	if m.IDs == IDsOfExamples {
		return false
	}
	for _, p := range positionalSources {
		if strings.HasPrefix(m.Source, p) {
			return true
		}
	}
	return false
}

// CheckExampleIDs refuses a file whose ids may be positional where they
// decide something per example — a per-row rule (split, imbalance,
// validation), or the grouping of a multi-view file's rows — since there
// one image removed from the source moves every later example.
func CheckExampleIDs(f *File) error {
	if !f.Metadata().PositionalIDs() {
		return nil
	}
	return fmt.Errorf("%s was extracted by an earlier dpfeat, which named the examples of %s by their position, so that removing one image renamed every later one: extract it again with this dpfeat (its ids belong to the examples)", f.Path(), f.Metadata().Source)
}

func parseMetadata(md arrow.Metadata) (Metadata, error) {
	m := Metadata{Extra: map[string]string{}}
	for i, k := range md.Keys() {
		v := md.Values()[i]
		switch k {
		case MetaVersion:
			m.Version = v
		case MetaEncoderSHA256:
			m.EncoderSHA256 = v
		case MetaEncoderName:
			m.EncoderName = v
		case MetaSource:
			m.Source = v
		case MetaCreated:
			m.Created = v
		case MetaDataID:
			m.DataID = v
		case MetaIDs:
			m.IDs = v
		case MetaBasis:
			m.Basis = v
		case MetaBasisSHA256:
			m.BasisSHA256 = v
		case MetaBasisSource:
			m.BasisSource = v
		case MetaClasses:
			if err := json.Unmarshal([]byte(v), &m.Classes); err != nil {
				return m, fmt.Errorf("schema metadata %s is not a JSON array of class names: %v", MetaClasses, err)
			}
		case MetaSubset:
			var d Derivation
			if err := json.Unmarshal([]byte(v), &d); err != nil {
				return m, fmt.Errorf("schema metadata %s is not valid JSON: %v", MetaSubset, err)
			}
			m.Subset = &d
		case MetaViews:
			var vw Views
			if err := json.Unmarshal([]byte(v), &vw); err != nil || vw.Views < 1 {
				return m, fmt.Errorf("schema metadata %s is not a views object with views ≥ 1: %s", MetaViews, v)
			}
			m.Views = &vw
		default:
			m.Extra[k] = v
		}
	}
	if err := CheckClassNames(m.Classes); err != nil {
		return m, fmt.Errorf("schema metadata %s: %v", MetaClasses, err)
	}
	return m, nil
}

// schema returns the Arrow schema of a feature file of dimension dim; a
// multi-view file (meta.Views) has the example column last.
func schema(dim int, withID bool, meta Metadata) *arrow.Schema {
	fields := []arrow.Field{
		{Name: ColFeatures, Type: arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float32), Nullable: false},
		{Name: ColLabel, Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}
	if withID {
		fields = append(fields, arrow.Field{Name: ColID, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	if meta.Views != nil {
		fields = append(fields, arrow.Field{Name: ColExample, Type: arrow.BinaryTypes.String, Nullable: false})
		if meta.Views.MixDiff > 0 {
			fields = append(fields, arrow.Field{Name: ColMixLabel, Type: arrow.PrimitiveTypes.Int32, Nullable: true},
				arrow.Field{Name: ColMixLambda, Type: arrow.PrimitiveTypes.Float32, Nullable: true})
		}
	}
	md := meta.arrow()
	return arrow.NewSchema(fields, &md)
}

// checkSchema verifies that s is a feature-file schema and returns its
// dimension and whether it has ids.
func checkSchema(s *arrow.Schema) (dim int, withID bool, err error) {
	fi := s.FieldIndices(ColFeatures)
	if len(fi) != 1 {
		return 0, false, fmt.Errorf("no %q column (columns: %s); expected %s", ColFeatures, columnNames(s), expectedLayout)
	}
	ft, ok := s.Field(fi[0]).Type.(*arrow.FixedSizeListType)
	if !ok || ft.Elem().ID() != arrow.FLOAT32 {
		return 0, false, fmt.Errorf("column %q has type %s; expected fixed_size_list<float32>[D]", ColFeatures, s.Field(fi[0]).Type)
	}
	if ft.Len() < 1 {
		return 0, false, fmt.Errorf("column %q has width %d; expected at least 1", ColFeatures, ft.Len())
	}
	li := s.FieldIndices(ColLabel)
	if len(li) != 1 {
		return 0, false, fmt.Errorf("no %q column (columns: %s); expected %s", ColLabel, columnNames(s), expectedLayout)
	}
	if t := s.Field(li[0]).Type; t.ID() != arrow.INT32 {
		return 0, false, fmt.Errorf("column %q has type %s; expected int32", ColLabel, t)
	}
	if ii := s.FieldIndices(ColID); len(ii) == 1 {
		if t := s.Field(ii[0]).Type; t.ID() != arrow.STRING {
			return 0, false, fmt.Errorf("column %q has type %s; expected utf8", ColID, t)
		}
		withID = true
	}
	if ii := s.FieldIndices(ColExample); len(ii) == 1 {
		if t := s.Field(ii[0]).Type; t.ID() != arrow.STRING {
			return 0, false, fmt.Errorf("column %q has type %s; expected utf8", ColExample, t)
		}
	}
	for _, c := range []struct {
		name string
		id   arrow.Type
	}{{ColMixLabel, arrow.INT32}, {ColMixLambda, arrow.FLOAT32}} {
		if ii := s.FieldIndices(c.name); len(ii) == 1 && s.Field(ii[0]).Type.ID() != c.id {
			return 0, false, fmt.Errorf("column %q has type %s; expected %s", c.name, s.Field(ii[0]).Type, strings.ToLower(c.id.String()))
		}
	}
	return int(ft.Len()), withID, nil
}

const expectedLayout = "features: fixed_size_list<float32>[D], label: int32, optional id: utf8"

func columnNames(s *arrow.Schema) string {
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
