package accounting

import (
	"fmt"
	"slices"
	"strings"
)

// AssumptionKind is one kind of thing a guarantee treats as public: each
// is listed once per guarantee, with every use made of it.
type AssumptionKind string

const (
	// AssumeN: the number of training examples n (N), which differs
	// between add/remove neighbours.
	AssumeN AssumptionKind = "n"
	// AssumeSchema: the feature dimension and the list of class names,
	// from the file's schema.
	AssumeSchema AssumptionKind = "schema"
	// AssumeClassesFromLabels: the class list, read from the label values
	// of Subject (the training data).
	AssumeClassesFromLabels AssumptionKind = "classes-from-labels"
	// AssumeClassCounts: the class counts (--public-counts).
	AssumeClassCounts AssumptionKind = "class-counts"
	// AssumePublicFeatures: the public feature file Subject.
	AssumePublicFeatures AssumptionKind = "public-features"
	// AssumeTransform: a feature transform (Subject: its kind) learned from
	// public rows (Detail: which).
	AssumeTransform AssumptionKind = "transform"
	// AssumeInitialParams: initial parameters Subject and whatever trained
	// them (Detail: what is known of that).
	AssumeInitialParams AssumptionKind = "initial-params"
)

// Assumption is one thing a guarantee treats as public, with what uses it.
type Assumption struct {
	Kind AssumptionKind
	// N is the number of examples (AssumeN).
	N int
	// Subject names the thing (a file, a transform's kind), Detail adds
	// what is known of it.
	Subject, Detail string
	// Uses says what the release does with it, one clause each.
	Uses []string
}

// Text is the assumption as the guarantee lists it: the one place each
// kind is worded.
func (a Assumption) Text() string {
	uses := strings.Join(a.Uses, "; ")
	with := func(s string) string {
		if uses == "" {
			return s
		}
		return s + ": " + uses
	}
	switch a.Kind {
	case AssumeN:
		return fmt.Sprintf("the number of training examples (n = %d), %s", a.N, uses)
	case AssumeSchema:
		return "the feature dimension and the list of class names"
	case AssumeClassesFromLabels:
		return "the class list, taken from the label values of " + a.Subject + " (pass --classes to fix it without reading the data)"
	case AssumeClassCounts:
		return with("the class counts (--public-counts)")
	case AssumePublicFeatures:
		s := "the public features " + a.Subject
		if a.Detail != "" {
			s += " (" + a.Detail + ")"
		}
		return with(s)
	case AssumeTransform:
		return fmt.Sprintf("the feature transform (%s), learned from %s", a.Subject, a.Detail)
	case AssumeInitialParams:
		if a.Detail == "" {
			return "the initial parameters " + a.Subject + " and whatever trained them (they must not have seen the private data)"
		}
		return "the initial parameters " + a.Subject + ": " + a.Detail
	}
	panic(fmt.Sprintf("accounting: unknown assumption %q", a.Kind))
}

// same reports whether a and b are the same assumption: a release makes
// each kind once (one n, one public file, one transform), so the kind
// decides; a later one adds its uses and fills what the first left out.
func (a Assumption) same(b Assumption) bool { return a.Kind == b.Kind }

// addAssumption merges a into a copy of list: a new use of a listed
// assumption joins its uses. It returns the list and the index of a.
func addAssumption(list []Assumption, a Assumption) ([]Assumption, int) {
	list = slices.Clone(list)
	i := slices.IndexFunc(list, a.same)
	if i < 0 {
		a.Uses = slices.Clone(a.Uses)
		return append(list, a), len(list)
	}
	x := list[i]
	x.Uses = slices.Clone(x.Uses)
	for _, u := range a.Uses {
		if !slices.Contains(x.Uses, u) {
			x.Uses = append(x.Uses, u)
		}
	}
	if x.Detail == "" {
		x.Detail = a.Detail
	}
	if x.Subject == "" {
		x.Subject = a.Subject
	}
	list[i] = x
	return list, i
}

// Assume records in g that a is treated as public, in Public, the list a
// person reads and the JSON carries: a kind is listed once, with all its
// uses (an assumption made again replaces its line).
func (g *Guarantee) Assume(a Assumption) {
	before := ""
	if i := slices.IndexFunc(g.assumed, a.same); i >= 0 {
		before = g.assumed[i].Text()
	}
	var i int
	g.assumed, i = addAssumption(g.assumed, a)
	text := g.assumed[i].Text()
	g.Public = slices.Clone(g.Public)
	if j := slices.Index(g.Public, before); before != "" && j >= 0 {
		g.Public[j] = text
	} else if !slices.Contains(g.Public, text) {
		g.Public = append(g.Public, text)
	}
}

// Assumptions are what g was told to treat as public (Assume).
func (g Guarantee) Assumptions() []Assumption { return slices.Clone(g.assumed) }

// MarkSeeded states that the release's noise came from a user seed.
func (g *Guarantee) MarkSeeded() { g.Seeded, g.Note = true, SeededNote }
