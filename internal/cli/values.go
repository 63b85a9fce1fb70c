package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

const (
	errFmtValues      = "cannot read the Secrets and ConfigMaps of %s"
	errFmtValuesKind  = "%s holds a %s: --values takes Secrets and ConfigMaps"
	errFmtGetValue    = "cannot get %s %s"
	msgFmtNotMounted  = "The volume at %s is not mounted: run reads no files into the function's folders.\n"
	errFmtUnmetLocal  = "%s: give them with --values FILE (Secret and ConfigMap manifests), or --from-cluster"
	msgFmtNoValues    = "%s %s (%s) is missing"
	msgFmtNoValuesKey = "%s %s has no key %q (%s)"
)

// A ValuesFn reads a Secret's or ConfigMap's data by kind (observe.KindSecret,
// observe.KindConfigMap) and name; found is false when there is none.
type ValuesFn func(kind, name string) (data map[string]string, found bool, err error)

// valuesOf reads Secret and ConfigMap manifests, as kubectl create secret
// --dry-run=client -o yaml writes them, by kind and name; namespaces are
// not read, since the function runs here.
func valuesOf(files []string) (ValuesFn, error) {
	all := map[string]map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // The file the user names.
		if err != nil {
			return nil, errors.Wrapf(err, errFmtValues, f)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err == io.EOF {
				break
			} else if err != nil {
				return nil, errors.Wrapf(err, errFmtValues, f)
			}
			if len(raw) == 0 || string(raw) == "null" {
				continue
			}
			kind, name, data, err := decodeValues(raw)
			if err != nil {
				return nil, errors.Wrapf(err, errFmtValues, f)
			}
			if data == nil {
				return nil, errors.Errorf(errFmtValuesKind, f, kind)
			}
			all[kind+"/"+name] = data
		}
	}
	return func(kind, name string) (map[string]string, bool, error) {
		d, ok := all[kind+"/"+name]
		return d, ok, nil
	}, nil
}

// clusterValues reads Secrets and ConfigMaps from a namespace of the API
// server, one GET each, only when the user asks.
func clusterValues(ctx context.Context, c client.Reader, namespace string) ValuesFn {
	return func(kind, name string) (map[string]string, bool, error) {
		key := types.NamespacedName{Namespace: namespace, Name: name}
		var err error
		var data map[string]string
		if kind == observe.KindSecret {
			s := &corev1.Secret{}
			err = c.Get(ctx, key, s)
			data = secretData(s)
		} else {
			cm := &corev1.ConfigMap{}
			err = c.Get(ctx, key, cm)
			data = configMapData(cm)
		}
		switch {
		case kerrors.IsNotFound(err):
			return nil, false, nil
		case err != nil:
			return nil, false, errors.Wrapf(err, errFmtGetValue, kind, key)
		}
		return data, true, nil
	}
}

// decodeValues decodes a Secret or ConfigMap manifest; data is nil for
// another kind.
func decodeValues(raw []byte) (kind, name string, data map[string]string, err error) {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return "", "", nil, err
	}
	switch head.Kind {
	case observe.KindSecret:
		s := &corev1.Secret{}
		err = json.Unmarshal(raw, s)
		data = secretData(s)
	case observe.KindConfigMap:
		c := &corev1.ConfigMap{}
		err = json.Unmarshal(raw, c)
		data = configMapData(c)
	}
	return head.Kind, head.Metadata.Name, data, err
}

// secretData is a Secret's values, stringData's over data's, as the API
// server merges them.
func secretData(s *corev1.Secret) map[string]string {
	d := map[string]string{}
	for k, v := range s.Data {
		d[k] = string(v)
	}
	maps.Copy(d, s.StringData)
	return d
}

// configMapData is a ConfigMap's values, text and binary.
func configMapData(c *corev1.ConfigMap) map[string]string {
	d := maps.Clone(c.Data)
	if d == nil {
		d = map[string]string{}
	}
	for k, v := range c.BinaryData {
		d[k] = string(v)
	}
	return d
}

// environment is the function's environment as the kubelet would give its
// container: envFrom's keys, then env's variables, which win, each read
// from values. What the cluster would hold the function for, run refuses;
// volumes are named and left out.
func environment(c corev1.Container, values ValuesFn, errOut io.Writer) ([]string, error) {
	for _, m := range c.VolumeMounts {
		fmt.Fprintf(errOut, msgFmtNotMounted, m.MountPath)
	}
	read := map[string]map[string]string{}
	var missing []string
	for _, ref := range observe.RequiredOf(corev1.PodSpec{Containers: []corev1.Container{{Name: c.Name, Env: c.Env, EnvFrom: c.EnvFrom}}}) {
		data, found, err := values(ref.Kind, ref.Name)
		switch {
		case err != nil:
			return nil, err
		case !found:
			missing = append(missing, fmt.Sprintf(msgFmtNoValues, ref.Kind, ref.Name, ref.Use))
		case ref.Key != "":
			if _, ok := data[ref.Key]; !ok {
				missing = append(missing, fmt.Sprintf(msgFmtNoValuesKey, ref.Kind, ref.Name, ref.Key, ref.Use))
			}
		}
		read[ref.Kind+"/"+ref.Name] = data
	}
	if len(missing) > 0 {
		return nil, errors.Errorf(errFmtUnmetLocal, strings.Join(missing, "; "))
	}
	lookup := func(kind, name string) map[string]string {
		if d, ok := read[kind+"/"+name]; ok {
			return d
		}
		// Optional ones are not required, so not read yet; missing, they
		// give nothing, as the kubelet does.
		d, _, _ := values(kind, name)
		return d
	}
	vars := map[string]string{}
	var order []string
	set := func(k, val string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = val
	}
	for _, f := range c.EnvFrom {
		kind, name := observe.KindConfigMap, ""
		if f.SecretRef != nil {
			kind, name = observe.KindSecret, f.SecretRef.Name
		} else if f.ConfigMapRef != nil {
			name = f.ConfigMapRef.Name
		}
		d := lookup(kind, name)
		for _, k := range slices.Sorted(maps.Keys(d)) {
			set(f.Prefix+k, d[k])
		}
	}
	for _, e := range c.Env {
		switch r := e.ValueFrom; {
		case r == nil:
			set(e.Name, e.Value)
		case r.SecretKeyRef != nil:
			if val, ok := lookup(observe.KindSecret, r.SecretKeyRef.Name)[r.SecretKeyRef.Key]; ok {
				set(e.Name, val)
			}
		case r.ConfigMapKeyRef != nil:
			if val, ok := lookup(observe.KindConfigMap, r.ConfigMapKeyRef.Name)[r.ConfigMapKeyRef.Key]; ok {
				set(e.Name, val)
			}
		}
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	return env, nil
}
