package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestEncodeConfigMap holds that a ConfigMap's stamp hashes, and lends,
// exactly what json.Marshal returns for it, whatever its data hold.
func TestEncodeConfigMap(t *testing.T) {
	rt, err := ResolveRuntime(&v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)}, BuildEnv{Args: []string{"PIP_INDEX_URL"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := quotedOf(rt.Wrapper); !ok {
		t.Fatal("the Python wrapper is not kept quoted")
	}
	if _, ok := quotedOf(rt.Dockerfile); !ok {
		t.Fatal("the rendered Dockerfile is not kept quoted")
	}
	meta := metav1.ObjectMeta{
		Namespace: "apps", Name: "fn-build-0123456789",
		Labels:      map[string]string{"app.kubernetes.io/name": "fn"},
		Annotations: map[string]string{"note": "<a & b>"},
	}
	cases := map[string]struct {
		reason       string
		cm           *corev1.ConfigMap
		wantVerbatim []string
	}{
		"BuildContext": {
			reason: "The runtime's files are written as kept, the handler's code as escaped, keys in order.",
			cm: &corev1.ConfigMap{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta, Immutable: ptr.To(true),
				Data: map[string]string{"lambda_wrapper.py": rt.Wrapper, "Dockerfile": rt.Dockerfile, "src-0": "def handler(e, c):\n    return {\"ok\": True}\n"},
			},
			wantVerbatim: []string{rt.Dockerfile, rt.Wrapper},
		},
		"Escapes": {
			reason: "Strings encoding/json escapes, for HTML, control characters, invalid UTF-8 and line separators, are escaped as it escapes them.",
			cm: &corev1.ConfigMap{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta,
				Data: map[string]string{"<k&>": "<script>&</script>", "lt": "a<b", "gt": "a>b", "amp": "a&b", "del": "\x7f", "ctl": "\x00\x01\t\r\b\f", "utf8": "é\xff\u2028\u2029😀", `q"\`: `"\`, "": ""},
			},
		},
		"NoData": {
			reason: "Without data, nothing is written for them.",
			cm:     &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta, Data: map[string]string{}},
		},
		"BinaryData": {
			reason: "Binary data, which follow the data, are written after them.",
			cm: &corev1.ConfigMap{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta,
				Data: map[string]string{"a": rt.Wrapper}, BinaryData: map[string][]byte{"b": {0, 1, 2}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(tc.cm)
			if err != nil {
				t.Fatal(err)
			}
			w := borrowHasher()
			defer w.done()
			w.json, w.verbatim = w.json[:0], w.verbatim[:0]
			if err := encodeJSON(&jsonHash{hasher: w, keep: true}, tc.cm); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(w.json)); diff != "" {
				t.Errorf("%s\nJSON: -json.Marshal, +encodeJSON:\n%s", tc.reason, diff)
			}
			var verbatim []string
			for _, v := range w.verbatim {
				var text string
				if err := json.Unmarshal(w.json[v.At:v.End], &text); err != nil || text != v.Text {
					t.Errorf("%s\nverbatim %d to %d is not the JSON of its text", tc.reason, v.At, v.End)
				}
				verbatim = append(verbatim, v.Text)
			}
			if diff := cmp.Diff(tc.wantVerbatim, verbatim); diff != "" {
				t.Errorf("%s\nverbatim texts: -want, +got:\n%s", tc.reason, diff)
			}
			sum := sha256.Sum256(want)
			if got, want := w.hexSum(sha256.Size), hex.EncodeToString(sum[:]); got != want {
				t.Errorf("%s\nhashed %s, the hash of json.Marshal's is %s", tc.reason, got, want)
			}
		})
	}
}
