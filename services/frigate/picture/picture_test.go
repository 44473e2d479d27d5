package picture

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

func testJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{R: byte(x * 7), G: byte(y * 13), B: byte((x ^ y) * 3), A: 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBound(t *testing.T) {
	small := testJPEG(t, 160, 90)
	big := testJPEG(t, 640, 360)
	var pngBuf bytes.Buffer
	_ = png.Encode(&pngBuf, image.NewRGBA(image.Rect(0, 0, 10, 10)))
	tests := []struct {
		name               string
		data               []byte
		maxHeight, maxSize int
		wantErr            error
		wantSame           bool
	}{
		{"within bounds passes unchanged", small, 720, 1 << 20, nil, true},
		{"too high is downscaled", big, 120, 1 << 20, nil, false},
		{"too many bytes is re-encoded", big, 720, 12 << 10, nil, false},
		{"impossible budget", big, 720, 200, ErrTooLarge, false},
		{"PNG is not accepted", pngBuf.Bytes(), 720, 1 << 20, ErrMalformed, false},
		{"garbage", []byte("not an image"), 720, 1 << 20, ErrMalformed, false},
		{"truncated JPEG", big[:len(big)/2], 120, 1 << 20, ErrMalformed, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Bound(tc.data, tc.maxHeight, tc.maxSize)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if out.Height > tc.maxHeight || len(out.Data) > tc.maxSize {
				t.Errorf("got %dx%d, %d bytes", out.Width, out.Height, len(out.Data))
			}
			if same := bytes.Equal(out.Data, tc.data); same != tc.wantSame || out.Reencoded == tc.wantSame {
				t.Errorf("unchanged = %v, reencoded = %v", same, out.Reencoded)
			}
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(out.Data))
			if err != nil || cfg.Height != out.Height || cfg.Width != out.Width {
				t.Errorf("result is not the JPEG it claims: %v %+v", err, cfg)
			}
		})
	}
}
