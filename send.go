// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// maxResponseBytes is what a response body may contribute to a message.
const maxResponseBytes = 64 * 1024

// maxDrainBytes bounds what is read of one response body in all: a body up
// to this size is read to its end, so that net/http can reuse the
// connection; a larger (or endless) one is given up, and its connection
// closed.
const maxDrainBytes = 1 << 20

// send makes one attempt: the payload's bytes, its key, nothing else
// computed again.
func (e *baseExporter) send(ctx context.Context, p *payload, attempt int) retry.Response {
	owned := &ownedHeaders{length: int64(len(p.body))}
	owned.add("Content-Type", e.contentType)
	owned.add("Content-Encoding", e.contentEncoding)
	if e.cfg.IdempotencyHeader != "" {
		owned.add(e.cfg.IdempotencyHeader, p.key.String())
	}
	if e.cfg.AttemptHeader != "" {
		owned.add(e.cfg.AttemptHeader, strconv.Itoa(attempt))
	}
	req, err := http.NewRequestWithContext(withOwnedHeaders(ctx, owned), http.MethodPost, e.url, bytes.NewReader(p.body))
	if err != nil {
		// No request can be made for this URL: a configuration error.
		return retry.Response{Err: &retry.ConfigError{Err: e.scrub.scrubError(redactURLError(err))}}
	}
	owned.apply(req)
	req.Header.Set("User-Agent", e.userAgent)
	resp, err := e.client.Do(req)
	if err != nil {
		return retry.Response{Err: e.scrub.scrubError(redactURLError(err))}
	}
	body := readBody(resp.Body)

	out := retry.Response{Status: resp.StatusCode, Header: resp.Header}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		e.partialSuccess(ctx, p, body, resp.Header.Get("Content-Type"))
	case code >= 300 && code <= 399:
		out.Err = fmt.Errorf("%s answered %d %s pointing to %q; redirects are never followed, so headers and credentials never reach another host: set the endpoint to the final URL",
			e.redactedURL, code, http.StatusText(code), truncate(e.scrub.scrub(redactLocation(resp.Header.Get("Location")))))
	default:
		msg := backendMessage(body, resp.Header.Get("Content-Type"))
		if msg != "" {
			msg = ": " + truncate(e.scrub.scrub(msg))
		}
		out.Err = fmt.Errorf("%s answered %d %s%s", e.redactedURL, code, http.StatusText(code), msg)
	}
	return out
}

// readBody returns the first maxResponseBytes of body, drains the rest up to
// maxDrainBytes in all, and closes it.
func readBody(body io.ReadCloser) []byte {
	defer body.Close()
	head, _ := io.ReadAll(io.LimitReader(body, maxResponseBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrainBytes-int64(len(head))))
	return head
}

// partialSuccess logs and counts what a 2xx rejected; it is not retried.
func (e *baseExporter) partialSuccess(ctx context.Context, p *payload, body []byte, contentType string) {
	rejected, msg, err := e.signal.rejected(body, contentType)
	if err != nil {
		// The parser's text quotes the body around the error (",
		// error found in #10 byte of ...|<body>|..."): a credential
		// cut at the edge of that quote would escape the scrubber.
		text, _, _ := strings.Cut(e.scrub.scrub(err.Error()), ", error found in")
		e.set.Logger.Debug("Could not read the export response", zap.String("error", text),
			zap.String("content_type", contentType), zap.Int("bytes", len(body)))
		return
	}
	msg = e.scrub.scrub(msg) // before anything truncates it
	if rejected < 0 || rejected > int64(p.items) {
		counted := min(max(rejected, 0), int64(p.items))
		note := fmt.Sprintf("the backend's %s=%d is out of range for a batch of %d %s; counted as %d",
			e.signal.rejectedField, rejected, p.items, e.signal.items, counted)
		if msg != "" {
			note += ". Backend message: " + msg
		}
		rejected, msg = counted, note
	}
	if rejected == 0 && msg == "" {
		return
	}
	e.tel.partialSuccess(ctx, p, rejected, msg)
}

// backendMessage extracts the message of an OTLP error body (a Status in
// protobuf or JSON) or a text body, whole: the caller scrubs it, then
// truncates it, so that no part of a credential survives at the cut.
func backendMessage(body []byte, contentType string) string {
	if len(body) == 0 {
		return ""
	}
	switch mediaType(contentType) {
	case protobufContentType:
		var st status.Status
		if proto.Unmarshal(body, &st) == nil && st.GetMessage() != "" {
			return st.GetMessage()
		}
		return ""
	case jsonContentType:
		var st struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return st.Message
		}
	}
	if text := strings.TrimSpace(string(body)); text != "" && !strings.ContainsFunc(text, isControl) {
		return text
	}
	return ""
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' }

// truncate cuts s to at most 256 bytes, at a character boundary.
func truncate(s string) string {
	const limit = 256
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType
	}
	return mt
}

// redactURLError keeps a transport error's cause but drops credentials and
// query strings from the URL it names.
func redactURLError(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		if u, perr := url.Parse(urlErr.URL); perr == nil {
			urlErr.URL = redact(u)
		}
	}
	return err
}

func redactLocation(loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return "(unparseable Location)"
	}
	return redact(u)
}

// redact returns u without user info, query or fragment, in every form a
// URL can take: absolute (https://user:pw@host), opaque (https:user:pw@host,
// where Go's parser keeps user info in Opaque), scheme-relative
// (//user:pw@host) and relative (user info look-alikes in the first path
// segment, https:/user:pw@host).
func redact(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	if c.Opaque != "" {
		if i := strings.LastIndex(c.Opaque, "@"); i >= 0 {
			c.Opaque = c.Opaque[i+1:]
			if c.Scheme != "http" && c.Scheme != "https" {
				// "user:pw@host" parses as scheme "user": the scheme is
				// the user name.
				return c.Opaque
			}
		}
		return c.String()
	}
	if c.Host == "" {
		c.Path = dropUserInfoLookAlike(c.Path)
		c.RawPath = ""
	}
	return c.String()
}

// dropUserInfoLookAlike cuts a first path segment up to its last '@'.
func dropUserInfoLookAlike(path string) string {
	lead := len(path) - len(strings.TrimLeft(path, "/"))
	first, rest, _ := strings.Cut(path[lead:], "/")
	i := strings.LastIndex(first, "@")
	if i < 0 {
		return path
	}
	out := path[:lead] + first[i+1:]
	if rest != "" || strings.Contains(path[lead:], "/") {
		out += "/" + rest
	}
	return out
}
