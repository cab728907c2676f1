package otlphttpretry

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
