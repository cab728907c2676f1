// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	stdgzip "compress/gzip"
	stdzlib "compress/zlib"
	"io"
	"testing"

	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// BenchmarkCompress compares, on one 500-span batch, the standard
// library's gzip and zlib (what confighttp uses) with the klauspost
// encoders compress() uses, at the default level, writers reused
// (benchstat -col /impl).
func BenchmarkCompress(b *testing.B) {
	raw, err := ptraceotlp.NewExportRequestFromTraces(spans("bench", 500)).MarshalProto()
	if err != nil {
		b.Fatal(err)
	}
	std := map[string]resetWriter{
		"gzip": stdgzip.NewWriter(io.Discard),
		"zlib": stdzlib.NewWriter(io.Discard),
	}
	for _, typ := range []configcompression.Type{configcompression.TypeGzip, configcompression.TypeZlib} {
		b.Run("type="+string(typ)+"/impl=stdlib", func(b *testing.B) {
			var buf bytes.Buffer
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				buf.Reset()
				w := std[string(typ)]
				w.Reset(&buf)
				_, _ = w.Write(raw)
				_ = w.Close()
			}
			b.ReportMetric(float64(len(raw))/float64(buf.Len()), "ratio")
		})
		b.Run("type="+string(typ)+"/impl=klauspost", func(b *testing.B) {
			var out []byte
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if out, err = compress(typ, 0, raw); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(raw))/float64(len(out)), "ratio")
		})
	}
}
