package encode

import "github.com/dpfeat/dpfeat/models"

// pool reduces the model output (vals, of the given shape, batch first) to
// one feature vector per image in out (n·D).
func pool(kind string, vals []float32, shape []int64, n int, out []float32) {
	switch kind {
	case models.PoolNone:
		copy(out, vals[:len(out)])
	case models.PoolCLS, models.PoolMean, models.PoolMeanPatch:
		t, d := int(shape[1]), int(shape[2])
		first := 0
		if kind == models.PoolMeanPatch {
			first = 1
		}
		for i := 0; i < n; i++ {
			dst := out[i*d : (i+1)*d]
			base := vals[i*t*d:]
			if kind == models.PoolCLS {
				copy(dst, base[:d])
				continue
			}
			// Accumulate in float64: token means of large ViTs lose
			// digits in float32.
			acc := make([]float64, d)
			for k := first; k < t; k++ {
				for j, v := range base[k*d : (k+1)*d] {
					acc[j] += float64(v)
				}
			}
			for j := range dst {
				dst[j] = float32(acc[j] / float64(t-first))
			}
		}
	case models.PoolGAP:
		c, hw := int(shape[1]), int(shape[2]*shape[3])
		for i := 0; i < n; i++ {
			for ch := 0; ch < c; ch++ {
				var s float64
				for _, v := range vals[(i*c+ch)*hw : (i*c+ch+1)*hw] {
					s += float64(v)
				}
				out[i*c+ch] = float32(s / float64(hw))
			}
		}
	}
}
