// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

func TestRedactLocationLeavesNoCredentialsInAnyURLForm(t *testing.T) {
	for _, tc := range []struct{ name, loc, want string }{
		{"absolute", "https://user:pw0rd@host:8443/x?token=q1w2e3#frag", "https://host:8443/x"},
		{"user without password", "https://tok3n@host/x", "https://host/x"},
		{"escaped user info", "https://us%40er:p%3Aw0rd@host/x", "https://host/x"},
		{"upper-case scheme", "HTTPS://USER:PW0RD@HOST/", "https://HOST/"},
		{"opaque", "https:user:pw0rd@host/x", "https:host/x"},
		{"opaque with query and fragment", "https:user:pw0rd@host/x?token=q1w2e3#frag", "https:host/x"},
		{"opaque with backslashes", `https:\\user:pw0rd@host/x`, "https:host/x"},
		{"opaque without user info", "https:host/x?token=q1w2e3", "https:host/x"},
		{"one slash", "https:/user:pw0rd@host/x", "https:/host/x"},
		{"scheme-relative", "//user:pw0rd@host/x?token=q1w2e3", "//host/x"},
		{"absolute path", "/v1/traces?token=q1w2e3#frag", "/v1/traces"},
		{"relative path", "v1/traces?token=q1w2e3", "v1/traces"},
		{"relative path with user info look-alike", "pw0rd@host/x?token=q1w2e3", "host/x"},
		{"query only", "?token=q1w2e3", ""},
		{"fragment only", "#pw0rd", ""},
		{"empty", "", ""},
		{"unparseable", "https://user:pw0rd@host:port/x", "(unparseable Location)"},
		{"user name parsed as a scheme", "user:pw0rd@host/x?token=q1w2e3", "host/x"},
		{"unparseable host", "http://user:pw0rd@[::1/x", "(unparseable Location)"},
		{"unparseable escape", "/x%zzpw0rd", "(unparseable Location)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := redactLocation(tc.loc)
			assert.Equal(t, tc.want, got)
			for _, secret := range []string{"pw0rd", "q1w2e3", "tok3n", "frag", "user", "USER", "us%40er"} {
				assert.NotContains(t, got, secret)
			}
		})
	}
}

func TestPartialSuccessCountIsClampedToThePayload(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rejected   int64
		dropped    int64 // 0: no drop recorded
		outOfRange bool
	}{
		{"negative", -3, 0, true},
		{"more than sent", 100, 5, true},
		{"all of them", 5, 5, false},
		{"some", 2, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := ptraceotlp.NewExportResponse()
			resp.PartialSuccess().SetRejectedSpans(tc.rejected)
			resp.PartialSuccess().SetErrorMessage("spans are too old")
			body, err := resp.MarshalProto()
			require.NoError(t, err)
			srv := newBackend(t, func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/x-protobuf")
				w.WriteHeader(200)
				_, _ = w.Write(body)
			})
			h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
			require.NoError(t, h.consume(5))

			if tc.dropped == 0 {
				requireNoMetric(t, h, mDropped)
			} else {
				metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
					h.sum(tc.dropped, attrReason("partial_success")),
				}, telOpts...)
			}
			lines := h.logs.FilterMessageSnippet("Partial success").All()
			require.Len(t, lines, 1)
			fields := lines[0].ContextMap()
			msg, _ := fields["message"].(string)
			assert.Contains(t, msg, "spans are too old")
			if tc.outOfRange {
				assert.Contains(t, msg, fmt.Sprintf("rejected_spans=%d is out of range for a batch of 5 spans; counted as %d", tc.rejected, tc.dropped))
			} else {
				assert.NotContains(t, msg, "out of range")
				assert.Equal(t, tc.dropped, fields["rejected_items"])
			}
			if tc.dropped > 0 {
				assert.Equal(t, tc.dropped, fields["rejected_items"])
			}
		})
	}
}
