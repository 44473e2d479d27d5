// Package picture bounds camera images before they reach a model: it checks
// that the bytes are a JPEG of sane dimensions and downscales and
// re-encodes it until it fits a height and a byte budget.
package picture

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"

	"golang.org/x/image/draw"
)

// MaxPixels bounds the decoded size: a small JPEG can claim huge
// dimensions, and decoding it would allocate width*height*4 bytes.
const MaxPixels = 40_000_000

// minHeight is the smallest height worth returning: below it, a picture
// shows nothing a model could describe.
const minHeight = 32

// ErrMalformed is returned for bytes that are not a decodable JPEG.
var ErrMalformed = errors.New("picture: not a decodable JPEG")

// ErrTooLarge is returned when the picture cannot be made to fit.
var ErrTooLarge = errors.New("picture: cannot fit the byte budget")

// Bounded is a picture that fits the limits.
type Bounded struct {
	Data []byte
	// Width and Height are the returned picture's dimensions.
	Width, Height int
	// OriginalWidth and OriginalHeight are the upstream's.
	OriginalWidth, OriginalHeight int
	// Reencoded reports whether the bytes differ from the upstream's.
	Reencoded bool
}

// Bound returns data unchanged when it is a JPEG at most maxHeight pixels
// high and maxBytes long, and otherwise a downscaled re-encoding that is.
func Bound(data []byte, maxHeight, maxBytes int) (Bounded, error) {
	if maxHeight < minHeight || maxBytes <= 0 {
		return Bounded{}, fmt.Errorf("picture: invalid limits (height %d, bytes %d)", maxHeight, maxBytes)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || format != "jpeg" {
		return Bounded{}, ErrMalformed
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxPixels {
		return Bounded{}, fmt.Errorf("%w: %dx%d pixels", ErrMalformed, cfg.Width, cfg.Height)
	}
	out := Bounded{Data: data, Width: cfg.Width, Height: cfg.Height, OriginalWidth: cfg.Width, OriginalHeight: cfg.Height}
	if cfg.Height <= maxHeight && len(data) <= maxBytes {
		return out, nil
	}
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return Bounded{}, ErrMalformed
	}
	h := min(cfg.Height, maxHeight)
	for h >= minHeight {
		w := max(1, cfg.Width*h/cfg.Height)
		scaled := src
		if h != cfg.Height {
			dst := image.NewRGBA(image.Rect(0, 0, w, h))
			draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
			scaled = dst
		}
		// Lower the quality first: it costs less detail than pixels.
		for _, q := range []int{80, 65, 50} {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, scaled, &jpeg.Options{Quality: q}); err != nil {
				return Bounded{}, fmt.Errorf("picture: encode: %w", err)
			}
			if buf.Len() <= maxBytes {
				out.Data, out.Width, out.Height, out.Reencoded = buf.Bytes(), w, h, true
				return out, nil
			}
		}
		h = h * 3 / 4
	}
	return Bounded{}, ErrTooLarge
}
