//go:build !cgo

package encode

import (
	"errors"

	"github.com/dpfeat/dpfeat/models"
)

// errNoCgo explains why extraction is unavailable in this build.
var errNoCgo = errors.New("this dpfeat was built without cgo, and ONNX Runtime needs it: rebuild with CGO_ENABLED=1 (and a C compiler) to extract features")

// Session is unavailable without cgo.
type Session struct{}

// InitRuntime fails without cgo.
func InitRuntime(string) error { return errNoCgo }

// RuntimeLibrary is empty without cgo.
func RuntimeLibrary() string { return "" }

// RuntimeVersion is empty without cgo.
func RuntimeVersion() string { return "" }

// OpenSession fails without cgo.
func OpenSession(string, *models.Manifest, SessionOptions) (*Session, error) { return nil, errNoCgo }

func (s *Session) Dim() int                            { return 0 }
func (s *Session) FixedBatch() int                     { return 0 }
func (s *Session) Provider() string                    { return "" }
func (s *Session) Note() string                        { return "" }
func (s *Session) Run([]float32, int, []float32) error { return errNoCgo }
func (s *Session) Close() error                        { return nil }
