package encode

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a progress bar with rows/s and ETA on a terminal (redrawn
// in place, four times a second) or, on a pipe or file, a line every ten
// seconds and one at the end (unless the last line already said as much).
type progress struct {
	w          io.Writer
	label      string // "extract" unless ExtractOptions.ProgressLabel
	tty        bool
	total      int64 // −1: unknown
	done, base int64
	drawn      int64 // the count the last line showed (−1: none yet)
	start      time.Time
	last       time.Time
}

func newProgress(w io.Writer, label string, total, already int64) *progress {
	p := &progress{w: w, label: cmp.Or(label, "extract"), total: total, done: already, base: already, drawn: -1, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) add(n int64) {
	if p == nil || p.w == nil {
		return
	}
	p.done += n
	every := 10 * time.Second
	if p.tty {
		every = 250 * time.Millisecond
	}
	if time.Since(p.last) >= every {
		p.last = time.Now()
		p.draw(false)
	}
}

func (p *progress) draw(final bool) {
	if final && !p.tty && p.drawn == p.done {
		return
	}
	p.drawn = p.done
	el := time.Since(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done-p.base) / el
	}
	var line string
	if p.total > 0 {
		frac := float64(p.done) / float64(p.total)
		const width = 24
		filled := min(width, int(frac*width))
		eta := "--:--"
		if rate > 0 && p.total > p.done {
			eta = clock(float64(p.total-p.done) / rate)
		} else if p.done >= p.total {
			eta = "0:00"
		}
		line = fmt.Sprintf("%s [%s%s] %d/%d %5.1f%%  %.0f img/s  ETA %s  elapsed %s", p.label,
			strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.done, p.total, 100*frac, rate, eta, clock(el))
	} else {
		line = fmt.Sprintf("%s %d images  %.0f img/s  elapsed %s", p.label, p.done, rate, clock(el))
	}
	switch {
	case p.tty && final:
		fmt.Fprintf(p.w, "\r%s\n", line)
	case p.tty:
		fmt.Fprintf(p.w, "\r%s", line)
	default:
		fmt.Fprintln(p.w, line)
	}
}

func (p *progress) finish() {
	if p == nil || p.w == nil {
		return
	}
	p.draw(true)
	p.w = nil
}

func clock(s float64) string {
	t := int(s + 0.5)
	if t >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
	}
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}
