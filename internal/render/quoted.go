package render

import (
	"encoding/json"
	"maps"
	"slices"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// quotedOf is the JSON string of text when it is a runtime file render has
// read, or a rendering renderings keeps. A build context's stamp writes each
// of its files as a JSON string, and the wrappers are the largest strings
// of a pass: each is escaped once per process.
func quotedOf(text string) ([]byte, bool) {
	if rf, err := loaded(); err == nil {
		if b := rf.quoted[text]; b != nil {
			return b, true
		}
	}
	return renderings.quotedOf(text)
}

// mustQuote is text as a JSON string; a string always encodes. It is nil
// for text that is not UTF-8, which encoding/json does not write as it is:
// what is kept quoted is also taken verbatim.
func mustQuote(text string) []byte {
	if !utf8.ValidString(text) {
		return nil
	}
	b, _ := json.Marshal(text) //nolint:errchkjson // A string always encodes.
	return b
}

// encodeConfigMap writes cm, which has data and no binary data, to h as
// json.Marshal returns it; the runtime's files among its data are written
// as quotedOf keeps them. A ConfigMap's data come last but for its binary
// data, so it is written without its data, which are then written in
// encoding/json's order: keys sorted.
func encodeConfigMap(h *jsonHash, cm *corev1.ConfigMap) error {
	bare := *cm
	bare.Data = nil
	b, err := json.Marshal(&bare)
	if err != nil {
		return err
	}
	h.add(b[:len(b)-1])
	h.add(jsonData)
	for i, k := range slices.Sorted(maps.Keys(cm.Data)) {
		if i > 0 {
			h.add(jsonComma)
		}
		if err := h.quote(k); err != nil {
			return err
		}
		h.add(jsonColon)
		if err := h.quote(cm.Data[k]); err != nil {
			return err
		}
	}
	h.add(jsonClose)
	return nil
}

// The JSON encodeConfigMap writes between what it quotes. They are
// variables: a hash's Write may keep what it is given, so a literal passed
// to it would be allocated at every call.
var (
	jsonData  = []byte(`,"data":{`)
	jsonComma = []byte{','}
	jsonColon = []byte{':'}
	jsonQuote = []byte{'"'}
	jsonClose = []byte("}}")
)

// quote writes s as encoding/json writes a string.
func (h *jsonHash) quote(s string) error {
	if b, ok := quotedOf(s); ok {
		h.addVerbatim(b, s)
		return nil
	}
	if plainJSON(s) {
		h.add(jsonQuote)
		h.addString(s)
		h.add(jsonQuote)
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	h.add(b)
	return nil
}

// plainJSON is true when encoding/json writes s between quotes as it is:
// ASCII but control characters, a quote, a backslash and the three
// characters it escapes for HTML. It writes most of UTF-8 as it is too, but
// that is left to it.
func plainJSON(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
