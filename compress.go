// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/config/configcompression"
)

// resetWriter is a compressor that can be reused for another output.
type resetWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// compressors are pooled per type and level: building a gzip writer costs
// hundreds of kilobytes, more than compressing a typical batch. gzip and
// zlib are klauspost/compress's, API-compatible with the standard
// library's (which confighttp uses) and faster at the same level (see
// BenchmarkCompress).
var compressorPools sync.Map // compressorKey -> *sync.Pool

type compressorKey struct {
	typ   configcompression.Type
	level configcompression.Level
}

func newResetWriter(k compressorKey) (resetWriter, error) {
	switch k.typ {
	case configcompression.TypeGzip:
		return gzip.NewWriterLevel(nil, levelOr(k.level, gzip.DefaultCompression))
	case configcompression.TypeZlib, configcompression.TypeDeflate:
		return zlib.NewWriterLevel(nil, levelOr(k.level, zlib.DefaultCompression))
	case configcompression.TypeZstd:
		return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(levelOr(k.level, 3))))
	}
	return nil, fmt.Errorf("unsupported compression %q", k.typ)
}

// compress encodes body once, as the configured compression asks; it
// returns the bytes to send ("none" and "" return body as it is).
func compress(typ configcompression.Type, level configcompression.Level, body []byte) ([]byte, error) {
	return compressChunks(typ, level, [][]byte{body})
}

// compressChunks is compress for a body given as chunks one after the
// other, which it compresses as one stream without joining them first
// (but for snappy's block format, and none, which need them joined).
func compressChunks(typ configcompression.Type, level configcompression.Level, chunks [][]byte) ([]byte, error) {
	switch typ {
	case "", "none":
		if len(chunks) == 1 {
			return chunks[0], nil
		}
		return bytes.Join(chunks, nil), nil
	case configcompression.TypeSnappy:
		return snappy.Encode(nil, bytes.Join(chunks, nil)), nil
	}
	size := 0
	for _, c := range chunks {
		size += len(c)
	}
	k := compressorKey{typ, level}
	pool, _ := compressorPools.LoadOrStore(k, &sync.Pool{})
	w, _ := pool.(*sync.Pool).Get().(resetWriter)
	if w == nil {
		var err error
		if w, err = newResetWriter(k); err != nil {
			return nil, err
		}
	}
	defer pool.(*sync.Pool).Put(w)
	var buf bytes.Buffer
	buf.Grow(size / 4)
	w.Reset(&buf)
	for _, c := range chunks {
		if _, err := w.Write(c); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	// The payload keeps these bytes, possibly for long in a queue while the
	// destination is held: keep exactly them, not the buffer's spare room.
	return bytes.Clone(buf.Bytes()), nil
}

func levelOr(l configcompression.Level, def int) int {
	if l == 0 {
		return def
	}
	return int(l)
}
