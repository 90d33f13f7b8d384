package cli

import (
	"encoding/json"
	"fmt"
	"io"

	ucli "github.com/urfave/cli/v2"
)

func jsonFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout instead of text"}
}

// writeJSON prints v as one indented JSON object and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return internal(fmt.Errorf("write JSON: %w", err))
	}
	return nil
}

func printf(w io.Writer, format string, args ...any) error {
	if _, err := fmt.Fprintf(w, format, args...); err != nil {
		return internal(fmt.Errorf("write output: %w", err))
	}
	return nil
}
