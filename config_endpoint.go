// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"net/url"
	"strings"
)

// endpointCredentials refuses credentials written into an endpoint URL.
//
// A query parameter: confighttp's client spans (otelhttp) record url.full
// with the query string, so the credential would leave in every span the
// collector exports about its own requests; and the endpoint is a plain
// string, shown as written by `otelcol print-config`, where headers: values
// (configopaque) are shown as [REDACTED].
//
// User info (https://user:password@host): otelhttp strips it from url.full
// and this exporter's logs never show it, but print-config still shows it
// as written, unlike a headers: value. Go's client sends it as Basic auth,
// which headers: (or the basicauth extension) does as well, masked.
//
// The messages name the parameter, never its value.
func endpointCredentials(u *url.URL) []error {
	var errs []error
	if u.User != nil {
		errs = append(errs, fmt.Errorf("user info in the URL is a credential, and the endpoint is a plain string that print-config shows as written "+
			"(headers: values are masked): remove it from the endpoint and send it in headers: (Authorization: Basic <base64 of user:password>) or with the basicauth extension (auth::authenticator)"))
	}
	for _, name := range queryNames(u.RawQuery) {
		if looksLikeCredential(name) {
			errs = append(errs, fmt.Errorf("query parameter %q looks like a credential: confighttp's client spans record url.full with the query string, "+
				"and print-config shows the endpoint as written; move it to headers: (whose values are masked), in the header your backend documents for it", name))
		}
	}
	return errs
}

// queryNames returns the names of the query's parameters, in order. It
// splits on both & and ; and keeps a name it cannot unescape as written, so
// that nothing url.ParseQuery would drop escapes the check.
func queryNames(rawQuery string) []string {
	var names []string
	for _, part := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		name, _, _ := strings.Cut(part, "=")
		if unescaped, err := url.QueryUnescape(name); err == nil {
			name = unescaped
		}
		if name != "" {
			names = append(names, name)
		}
	}
	return names
}

// credentialNames are query parameter names that carry a credential, in
// lower case with - written as _.
var credentialNames = map[string]bool{
	"key": true, "api_key": true, "apikey": true, "x_api_key": true,
	"token": true, "access_token": true, "auth": true, "authorization": true,
	"secret": true, "password": true, "passwd": true, "pwd": true, "pass": true,
	"signature": true, "sig": true, "code": true, "sid": true, "dsn": true,
}

// credentialParts are parts of a name that make it a credential wherever
// they appear (ingest_token, client_secret, db_password, x-amz-signature,
// sessionid, license_key, private_key, sentry_dsn, jwt_assertion).
var credentialParts = []string{
	"token", "secret", "password", "passwd", "apikey", "api_key", "signature", "jwt", "credential", "session",
	"license", "licence", "private", "dsn", "ingestkey", "accesskey", "secretkey", "authkey", "auth_",
}

func looksLikeCredential(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if credentialNames[n] || strings.HasSuffix(n, "_key") {
		return true
	}
	for _, part := range credentialParts {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// redactRawURL is raw, which may not parse, without what could be a
// credential: the user info (up to the last "@" before the path) and
// everything from the first "?" or "#" on.
func redactRawURL(raw string) string {
	s, cut := raw, ""
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s, cut = s[:i], "?(query not shown)"
	}
	prefix, rest := "", s
	if i := strings.Index(s, "//"); i >= 0 {
		prefix, rest = s[:i+2], s[i+2:]
	}
	authority := rest
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		authority = rest[:j]
	}
	if k := strings.LastIndexByte(authority, '@'); k >= 0 {
		prefix, rest = prefix+"(user info not shown)@", rest[k+1:]
	} else if k := strings.LastIndexByte(s, '@'); k >= 0 && !strings.Contains(s, "//") {
		// "user:password@host" with no scheme separator.
		prefix, rest = "(user info not shown)@", s[k+1:]
	}
	return prefix + rest + cut
}
