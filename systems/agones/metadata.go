package agones

import (
	"context"
	"fmt"
	"net/http"
)

// SetLabel sets a label of the game server (stored by Agones as
// "agones.dev/sdk-"+key): for a fleet's allocator to select on. It errors
// without calling the sidecar on a key or value Kubernetes refuses (see
// ValidLabel).
func (s *SDK) SetLabel(ctx context.Context, key, value string) error {
	if err := ValidLabel(key, value); err != nil {
		return err
	}
	return s.call(ctx, http.MethodPut, "/metadata/label", keyValue{key, value}, nil)
}

// SetAnnotation sets an annotation of the game server (stored as
// "agones.dev/sdk-"+key). The key follows the label key rule; the value
// is free text.
func (s *SDK) SetAnnotation(ctx context.Context, key, value string) error {
	if err := ValidLabel(key, ""); err != nil {
		return err
	}
	return s.call(ctx, http.MethodPut, "/metadata/annotation", keyValue{key, value}, nil)
}

type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MaxLabelKey is the longest key SetLabel and SetAnnotation take: Agones
// stores key as "agones.dev/sdk-"+key, whose name part ("sdk-"+key) may
// have 63 characters. The in-cluster sidecar accepts a longer key (it
// checks the key alone), then Kubernetes refuses the patch and every
// label set after it is lost too.
const MaxLabelKey = 63 - len("sdk-")

// ValidLabel checks a label as Kubernetes will once Agones has prefixed
// it: the key 1..MaxLabelKey characters and the value 0..63, each of
// letters, digits, '-', '_' and '.', starting and ending with a letter or
// digit. The error names the bad part.
func ValidLabel(key, value string) error {
	if err := labelPart(key, 1, MaxLabelKey); err != nil {
		return fmt.Errorf("agones: label key %q: %w", key, err)
	}
	if err := labelPart(value, 0, 63); err != nil {
		return fmt.Errorf("agones: label value %q: %w", value, err)
	}
	return nil
}

func labelPart(s string, least, most int) error {
	if len(s) < least || len(s) > most {
		return fmt.Errorf("length %d outside %d..%d", len(s), least, most)
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !alnum(c) && c != '-' && c != '_' && c != '.' {
			return fmt.Errorf("character %q at %d is not a letter, digit, '-', '_' or '.'", c, i)
		}
		if (i == 0 || i == len(s)-1) && !alnum(c) {
			return fmt.Errorf("must start and end with a letter or digit")
		}
	}
	return nil
}
