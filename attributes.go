// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

// exporterAttributeValues are the values the exporter itself gives its
// metrics' enumerated attributes, keyed as metadata.yaml names the
// attributes; the retry loop's own are retry.AttributeValues. Together
// they are the one source that metadata.yaml's enums, documentation.md and
// the README's metric table are held to (attributes_test.go).
var exporterAttributeValues = map[string][]string{
	"drop_reason": {dropPartialSuccess, dropEncodeFailure, dropTooLarge, dropQueueFull, dropShutdown},
	"result":      {resultCapped},
}

// resultCapped is a Retry-After above retry_after::max
// (retry_after_parsed{result}).
const resultCapped = "capped"
