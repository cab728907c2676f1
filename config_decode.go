// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

// durationKeys are the keys of every time.Duration in Config, found from
// the struct itself (mapstructure tags, squashed structs, optional
// sections), so that a key added to Config cannot miss the unit check:
// this exporter's own, confighttp's timeouts and the sending queue's.
var durationKeys = durationKeysOf(reflect.TypeFor[Config](), "")

var durationType = reflect.TypeFor[time.Duration]()

// durationKeysOf lists the keys of the time.Duration fields of struct type
// t, each prefixed with prefix. A configoptional.Optional[T] section is
// walked as T (its Get method's result).
func durationKeysOf(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		squash := strings.Contains(f.Tag.Get("mapstructure"), ",squash")
		if tag == "-" {
			continue
		}
		key := prefix + tag
		if squash {
			key = strings.TrimSuffix(prefix, "::")
		} else if tag == "" {
			key = prefix + strings.ToLower(f.Name)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if get, ok := reflect.PointerTo(ft).MethodByName("Get"); ok && get.Type.NumIn() == 1 && get.Type.NumOut() == 1 &&
			get.Type.Out(0).Kind() == reflect.Pointer && strings.Contains(ft.Name(), "Optional[") {
			ft = get.Type.Out(0).Elem()
		}
		switch {
		case ft == durationType:
			keys = append(keys, key)
		case ft.Kind() == reflect.Struct:
			sub := key + "::"
			if key == "" {
				sub = ""
			}
			keys = append(keys, durationKeysOf(ft, sub)...)
		}
	}
	return keys
}

// checkRawValues refuses, before they are decoded, the values that the
// decoder would turn into something else without a word:
//   - a duration written as a bare number (`timeout: 30`) decodes as that
//     many nanoseconds; a plain 0 is unambiguous and passes;
//   - a duration string time.ParseDuration refuses (a typo, or more than
//     about 2562047h) fails in the decoder with a message that names
//     neither the value nor the fix;
//   - a max_attempts written as a fraction is truncated, and one too large
//     for an int (1e30) wraps to a negative number.
func checkRawValues(conf *confmap.Conf) error {
	var errs []error
	for _, key := range durationKeys {
		if err := checkRawDuration(key, conf.Get(key)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := checkRawCount("backoff::max_attempts", conf.Get("backoff::max_attempts")); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func checkRawDuration(key string, raw any) error {
	switch v := raw.(type) {
	case string:
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("%s: %q is not a duration: write a number with a unit (ns, us, ms, s, m, h), e.g. 30s, of at most 2562047h", key, v)
		}
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		if f, ok := asFloat(v); ok && f == 0 {
			return nil
		}
		return fmt.Errorf("%s: %v has no unit and would be read as %v nanoseconds; write a unit, e.g. 30s", key, v, v)
	}
	return nil
}

// maxExactFloatInt is the largest integer a float64 holds exactly (2^53).
const maxExactFloatInt = 1 << 53

func checkRawCount(key string, raw any) error {
	const fix = "write a whole number of attempts, e.g. 5"
	switch v := raw.(type) {
	case float32, float64:
		f, _ := asFloat(v)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return fmt.Errorf("%s: %v is not a count of attempts; %s", key, v, fix)
		case math.Abs(f) > maxExactFloatInt:
			return fmt.Errorf("%s: %v is too large to be a count of attempts; %s", key, v, fix)
		case f != math.Trunc(f):
			return fmt.Errorf("%s: %v is not a whole number; %s", key, v, fix)
		}
	case uint64:
		if v > math.MaxInt64 {
			return fmt.Errorf("%s: %v is too large to be a count of attempts; %s", key, v, fix)
		}
	case uint:
		if uint64(v) > math.MaxInt64 {
			return fmt.Errorf("%s: %v is too large to be a count of attempts; %s", key, v, fix)
		}
	}
	return nil
}

func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
