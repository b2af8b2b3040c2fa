package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"os/exec"
	"time"
)

// ExportOptions are how a WebM is made.
type ExportOptions struct {
	// FFmpeg is the ffmpeg executable (default "ffmpeg" on PATH).
	FFmpeg string
	// Timeout bounds ffmpeg (default 10 minutes).
	Timeout time.Duration
	// Stderr receives ffmpeg's error output, for the caller's message.
	Stderr io.Writer
}

// ErrNoFFmpeg says ffmpeg is not installed.
var ErrNoFFmpeg = errors.New("ffmpeg is not installed")

// ErrEmpty says there is nothing to export.
var ErrEmpty = errors.New("the recording holds no frames or gaps")

// ffmpegArgs are fixed: JPEGs at VideoFPS on stdin, VP8 in WebM to out.
// Nothing of the recording's content or the command line reaches them but
// the output path, which the caller chose.
func ffmpegArgs(out string) []string {
	return []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y",
		"-f", "image2pipe", "-framerate", fmt.Sprint(VideoFPS), "-c:v", "mjpeg", "-i", "pipe:0",
		"-an", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M",
		"-pix_fmt", "yuv420p", "-f", "webm", out}
}

// Export writes x's video to out (a WebM) with ffmpeg: every segment's
// picture (the frame, scaled onto one canvas, or a slate) for its video
// duration.
func Export(ctx context.Context, x *Index, out string, o ExportOptions) error {
	if len(x.Segments) == 0 {
		return ErrEmpty
	}
	if o.FFmpeg == "" {
		o.FFmpeg = "ffmpeg"
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	bin, err := exec.LookPath(o.FFmpeg)
	if err != nil {
		return fmt.Errorf("%w (%v): install it with scripts/install-ffmpeg.sh (Debian: apt-get install ffmpeg), or give --ffmpeg", ErrNoFFmpeg, err)
	}
	w, h := canvasSize(x)
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, ffmpegArgs(out)...)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting ffmpeg: %w", err)
	}
	werr := writeFrames(stdin, x, w, h)
	_ = stdin.Close()
	err = cmd.Wait()
	if o.Stderr != nil {
		_, _ = o.Stderr.Write(stderr.Bytes())
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("ffmpeg did not finish within %s: %w", o.Timeout, ctx.Err())
	case err != nil:
		return fmt.Errorf("ffmpeg failed: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	case werr != nil:
		return werr
	}
	return nil
}

// writeFrames sends each segment's picture, once per video frame it lasts.
func writeFrames(wr io.Writer, x *Index, w, h int) error {
	var slate []byte
	for _, s := range x.Segments {
		var pic []byte
		if s.Kind == "frame" && s.frame != nil {
			b, err := fit(s.frame.JPEG, w, h)
			if err != nil {
				b = nil // a frame that does not decode is shown as a slate
			}
			pic = b
		}
		if pic == nil {
			if slate == nil {
				slate = slateJPEG(w, h)
			}
			pic = slate
		}
		for range s.VideoDur / frameMS {
			if _, err := wr.Write(pic); err != nil {
				return fmt.Errorf("writing to ffmpeg: %w", err)
			}
		}
	}
	return nil
}

// canvasSize is the largest frame's size, even (VP8 in yuv420p needs it).
func canvasSize(x *Index) (int, int) {
	w, h := 320, 180
	first := true
	for _, s := range x.Segments {
		if s.frame == nil {
			continue
		}
		if first {
			w, h, first = 0, 0, false
		}
		if c, err := jpeg.DecodeConfig(bytes.NewReader(s.frame.JPEG)); err == nil {
			w, h = max(w, c.Width), max(h, c.Height)
		}
	}
	if w == 0 || h == 0 {
		w, h = 320, 180
	}
	return w + w%2, h + h%2
}

// fit draws a JPEG at the top left of a w x h canvas.
func fit(b []byte, w, h int) ([]byte, error) {
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if img.Bounds().Dx() == w && img.Bounds().Dy() == h {
		return b, nil
	}
	c := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(c, c.Bounds(), image.NewUniform(color.Black), image.Point{}, draw.Src)
	draw.Draw(c, img.Bounds().Sub(img.Bounds().Min), img, img.Bounds().Min, draw.Src)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, c, &jpeg.Options{Quality: 85}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// slateJPEG is the picture of a gap: dark grey with diagonal stripes, so no
// one mistakes it for a page.
func slateJPEG(w, h int) []byte {
	c := image.NewRGBA(image.Rect(0, 0, w, h))
	dark, stripe := color.RGBA{40, 40, 40, 255}, color.RGBA{70, 70, 70, 255}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if (x+y)/24%2 == 0 {
				c.Set(x, y, stripe)
			} else {
				c.Set(x, y, dark)
			}
		}
	}
	var out bytes.Buffer
	_ = jpeg.Encode(&out, c, &jpeg.Options{Quality: 85})
	return out.Bytes()
}
