// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demobackend

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// echoForm is one of the error answers of ModeEcho.
type echoForm struct {
	status      int
	contentType string
}

// echoForms are the answers of ModeEcho, in the order they are used: a
// permanent text error, a permanent JSON error in the OTLP/HTTP JSON shape,
// and a retryable text error without Retry-After.
var echoForms = []echoForm{
	{status: http.StatusBadRequest, contentType: "text/plain; charset=utf-8"},
	{status: http.StatusForbidden, contentType: jsonContentType},
	{status: http.StatusServiceUnavailable, contentType: "text/plain; charset=utf-8"},
}

// EchoHeaders renders h as the echo answers carry it: one "Name: value"
// line per value, names sorted.
func EchoHeaders(h http.Header) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			b.WriteString(name + ": " + v + "\n")
		}
	}
	return b.String()
}

// writeEcho answers with an error whose body repeats the request's headers,
// as a careless backend or proxy might.
func writeEcho(w http.ResponseWriter, form echoForm, h http.Header) {
	text := "demo backend rejected the request; it carried these headers:\n" + EchoHeaders(h)
	body := []byte(text)
	if form.contentType == jsonContentType {
		headers := map[string]string{}
		for k := range h {
			headers[k] = h.Get(k)
		}
		body, _ = json.Marshal(struct {
			Message string            `json:"message"`
			Headers map[string]string `json:"headers"`
		}{Message: text, Headers: headers})
	}
	w.Header().Set("Content-Type", form.contentType)
	w.WriteHeader(form.status)
	_, _ = w.Write(body)
}
