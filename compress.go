package otlphttpretry

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/config/configcompression"
)

// compress encodes body once, as the configured compression asks; it
// returns the bytes and the Content-Encoding to send them with ("" for none).
func compress(typ configcompression.Type, level configcompression.Level, body []byte) ([]byte, string, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch typ {
	case "", "none":
		return body, "", nil
	case configcompression.TypeGzip:
		w, err = gzip.NewWriterLevel(&buf, levelOr(level, gzip.DefaultCompression))
	case configcompression.TypeZlib, configcompression.TypeDeflate:
		w, err = zlib.NewWriterLevel(&buf, levelOr(level, zlib.DefaultCompression))
	case configcompression.TypeZstd:
		w, err = zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(levelOr(level, 3))))
	case configcompression.TypeSnappy:
		return snappy.Encode(nil, body), string(typ), nil
	default:
		return nil, "", fmt.Errorf("unsupported compression %q", typ)
	}
	if err != nil {
		return nil, "", err
	}
	if _, err = w.Write(body); err != nil {
		return nil, "", err
	}
	if err = w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), string(typ), nil
}

func levelOr(l configcompression.Level, def int) int {
	if l == 0 {
		return def
	}
	return int(l)
}
