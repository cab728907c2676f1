// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// A batch compressed after garbage collections reuses a kept writer: it
// allocates about its output, not a new writer's tables (hundreds of
// kilobytes for gzip). A sync.Pool, emptied by every collection, fails
// this. Every reuse gives the same bytes as the first use, which decompress
// to the batch's request.
func TestCompressReusesWritersAcrossGC(t *testing.T) {
	raw, err := ptraceotlp.NewExportRequestFromTraces(spans("gc", 500)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	decompress := map[configcompression.Type]func(io.Reader) (io.Reader, error){
		configcompression.TypeGzip:    func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		configcompression.TypeZlib:    func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
		configcompression.TypeDeflate: func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
		configcompression.TypeZstd:    func(r io.Reader) (io.Reader, error) { return zstd.NewReader(r) },
	}
	for typ, open := range decompress {
		t.Run(string(typ), func(t *testing.T) {
			first, err := compressChunks(typ, 0, [][]byte{raw[:len(raw)/2], raw[len(raw)/2:]})
			if err != nil {
				t.Fatal(err)
			}
			r, err := open(bytes.NewReader(first))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("the compressed batch does not decompress to its request (err %v)", err)
			}
			for range 3 {
				runtime.GC()
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				again, err := compressChunks(typ, 0, [][]byte{raw})
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again, first) {
					t.Fatal("a reused writer gave other bytes than the first")
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(4*len(first)+64<<10) {
					t.Fatalf("compressing a %d-byte batch after garbage collections allocated %d bytes: a writer was built again", len(raw), alloc)
				}
			}
		})
	}
}
