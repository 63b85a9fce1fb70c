package knative

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kneventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	knsourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

// kindPackages are where a kind's own types live, ours and Knative's, and
// this test's, whose types show that wire tells wire forms apart: wire walks
// into their types, and stops at any other type, such as Knative's duck
// types and metav1's, which both sides share.
var kindPackages = []string{
	reflect.TypeFor[knativeSpec]().PkgPath(),
	reflect.TypeFor[eventingv1.Broker]().PkgPath(),
	reflect.TypeFor[sourcesv1.PingSource]().PkgPath(),
	reflect.TypeFor[kneventingv1.Broker]().PkgPath(),
	reflect.TypeFor[knsourcesv1.PingSource]().PkgPath(),
	reflect.TypeFor[servingv1.Service]().PkgPath(),
	reflect.TypeFor[knservingv1.Service]().PkgPath(),
}

// wire lists every JSON path of a type with what it holds there and
// whether it is left out when empty: two types with the same list read and
// write the same JSON. A type that holds itself, as a filter holds filters,
// is listed once, then named where it recurs.
func wire(t reflect.Type) []string {
	var out []string
	within := map[string]bool{}
	var walk func(path string, t reflect.Type)
	walk = func(path string, t reflect.Type) {
		switch {
		case t.Kind() == reflect.Pointer:
			out = append(out, path+" *")
			walk(path, t.Elem())
		case t.Kind() == reflect.Slice:
			walk(path+"[]", t.Elem())
		case t.Kind() == reflect.Map:
			out = append(out, fmt.Sprintf("%s map[%s]", path, t.Key()))
			walk(path+"{}", t.Elem())
		case t.Kind() == reflect.Struct && slices.Contains(kindPackages, t.PkgPath()) && within[t.Name()]:
			out = append(out, path+" recurs "+t.Name())
		case t.Kind() == reflect.Struct && slices.Contains(kindPackages, t.PkgPath()):
			within[t.Name()] = true
			defer delete(within, t.Name())
			for f := range t.Fields() {
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "" && f.Anonymous {
					walk(path, f.Type)
					continue
				}
				walk(path+"."+name, f.Type)
				if strings.Contains(opts, "omitempty") {
					out = append(out, path+"."+name+" omitempty")
				}
			}
		case t.PkgPath() == "" || slices.Contains(kindPackages, t.PkgPath()):
			out = append(out, path+" "+t.Kind().String())
		default:
			out = append(out, path+" "+t.PkgPath()+"."+t.Name())
		}
	}
	walk("", t)
	slices.Sort(out)
	return out
}

func TestWireFormIsKnatives(t *testing.T) {
	cases := map[string]struct {
		reason       string
		ours, theirs reflect.Type
	}{
		"Broker":         {reason: "A Broker must read and write as Knative's does.", ours: reflect.TypeFor[eventingv1.Broker](), theirs: reflect.TypeFor[kneventingv1.Broker]()},
		"BrokerList":     {reason: "A list of Brokers must read as Knative's does.", ours: reflect.TypeFor[eventingv1.BrokerList](), theirs: reflect.TypeFor[kneventingv1.BrokerList]()},
		"Trigger":        {reason: "A Trigger must read and write as Knative's does.", ours: reflect.TypeFor[eventingv1.Trigger](), theirs: reflect.TypeFor[kneventingv1.Trigger]()},
		"TriggerList":    {reason: "A list of Triggers must read as Knative's does.", ours: reflect.TypeFor[eventingv1.TriggerList](), theirs: reflect.TypeFor[kneventingv1.TriggerList]()},
		"PingSource":     {reason: "A PingSource must read and write as Knative's does.", ours: reflect.TypeFor[sourcesv1.PingSource](), theirs: reflect.TypeFor[knsourcesv1.PingSource]()},
		"PingSourceList": {reason: "A list of PingSources must read as Knative's does.", ours: reflect.TypeFor[sourcesv1.PingSourceList](), theirs: reflect.TypeFor[knsourcesv1.PingSourceList]()},
		"Service":        {reason: "A Service must read and write as Knative's does.", ours: reflect.TypeFor[servingv1.Service](), theirs: reflect.TypeFor[knservingv1.Service]()},
		"ServiceList":    {reason: "A list of Services must read as Knative's does.", ours: reflect.TypeFor[servingv1.ServiceList](), theirs: reflect.TypeFor[knservingv1.ServiceList]()},
		"Revision":       {reason: "A Revision must read as Knative's does.", ours: reflect.TypeFor[servingv1.Revision](), theirs: reflect.TypeFor[knservingv1.Revision]()},
		"RevisionList":   {reason: "A list of Revisions must read as Knative's does.", ours: reflect.TypeFor[servingv1.RevisionList](), theirs: reflect.TypeFor[knservingv1.RevisionList]()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(wire(tc.theirs), wire(tc.ours)); diff != "" {
				t.Errorf("%s\nwire form: -Knative's, +ours:\n%s", tc.reason, diff)
			}
		})
	}
}

// The specs below differ from knativeSpec as a wire form can.
type (
	knativeSpec struct {
		Schedule string `json:"schedule,omitempty"`
	}
	renamedSpec struct {
		Schedule string `json:"cron,omitempty"`
	}
	keptSpec struct {
		Schedule string `json:"schedule"`
	}
	retypedSpec struct {
		Schedule *string `json:"schedule,omitempty"`
	}
)

func TestWireSeesADifference(t *testing.T) {
	cases := map[string]struct {
		reason string
		other  reflect.Type
	}{
		"Renamed":       {reason: "A field under another JSON name is another wire form.", other: reflect.TypeFor[renamedSpec]()},
		"NoLongerOmits": {reason: "A field written when empty is another wire form.", other: reflect.TypeFor[keptSpec]()},
		"Retyped":       {reason: "A field that may be null is another wire form.", other: reflect.TypeFor[retypedSpec]()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if cmp.Equal(wire(reflect.TypeFor[knativeSpec]()), wire(tc.other)) {
				t.Errorf("%s\nwire saw no difference: %v", tc.reason, wire(tc.other))
			}
		})
	}
}
