// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
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

// compressors are kept per type and level, with the buffer they last
// wrote into: building a gzip writer costs hundreds of kilobytes, more than
// compressing a typical batch. gzip and zlib are klauspost/compress's,
// API-compatible with the standard library's (which confighttp uses) and
// faster at the same level (see BenchmarkCompress).
//
// Not a sync.Pool: every garbage collection empties one, and under a
// steady load of small requests the collector collects several times
// between two batches, so each batch built its writer again (profiled end
// to end: the writer's tables were most of the exporter's allocation, and
// the heap growth and page faults they brought cost more than the rest of
// forming the batch). A few writers (at most compressorsKept per type and
// level) are kept for the process's life instead.
var compressorPools sync.Map // compressorKey -> chan *compressorState

// compressorsKept bounds the writers kept per type and level: as many as
// formations can run at once on the processors, at least 2.
var compressorsKept = max(2, runtime.GOMAXPROCS(0))

// maxKeptBuffer bounds the output buffer kept with a writer: a batch
// larger once compressed gets a buffer of its own.
const maxKeptBuffer = 4 << 20

// compressorState is a writer and the buffer it last wrote into.
type compressorState struct {
	w   resetWriter
	buf bytes.Buffer
}

type compressorKey struct {
	typ   configcompression.Type
	level configcompression.Level
}

// getCompressor takes a kept writer for k, or builds one.
func getCompressor(k compressorKey) (*compressorState, chan *compressorState, error) {
	v, ok := compressorPools.Load(k)
	if !ok {
		v, _ = compressorPools.LoadOrStore(k, make(chan *compressorState, compressorsKept))
	}
	kept := v.(chan *compressorState)
	select {
	case c := <-kept:
		return c, kept, nil
	default:
	}
	w, err := newResetWriter(k)
	if err != nil {
		return nil, nil, err
	}
	return &compressorState{w: w}, kept, nil
}

// putCompressor keeps c for the next batch, unless enough are kept.
func putCompressor(kept chan *compressorState, c *compressorState) {
	c.buf.Reset()
	if c.buf.Cap() > maxKeptBuffer {
		c.buf = bytes.Buffer{}
	}
	select {
	case kept <- c:
	default:
	}
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
	c, kept, err := getCompressor(compressorKey{typ, level})
	if err != nil {
		return nil, err
	}
	defer putCompressor(kept, c)
	c.buf.Grow(size / 4)
	c.w.Reset(&c.buf)
	for _, chunk := range chunks {
		if _, err := c.w.Write(chunk); err != nil {
			return nil, err
		}
	}
	if err := c.w.Close(); err != nil {
		return nil, err
	}
	// The payload keeps these bytes, possibly for long in a queue while the
	// destination is held: keep exactly them, not the buffer, which the
	// next batch reuses.
	return bytes.Clone(c.buf.Bytes()), nil
}

func levelOr(l configcompression.Level, def int) int {
	if l == 0 {
		return def
	}
	return int(l)
}
