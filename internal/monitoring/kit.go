package monitoring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// The kit's files, in Dir.
const (
	Dir           = "examples/monitoring"
	RuleFile      = "prometheusrule.yaml"
	DashboardFile = "dashboard.json"
)

const (
	errReadFmt      = "cannot read %s"
	errDecodeFmt    = "cannot decode %s"
	errRulesFmt     = "%s is not a valid Prometheus rule file: %s"
	errNoGroups     = "the PrometheusRule has no spec.groups"
	errParseExprFmt = "%s: cannot parse %q"
)

// A Query is one PromQL expression of the kit, and where it is.
type Query struct {
	Where string
	Expr  string
}

// Load reads every query of the kit in dir: each rule's expression, after
// Prometheus's rule file parser has validated the rule groups (expressions,
// durations and annotation templates), and each query of the dashboard's
// panels and variables.
func Load(dir string) ([]Query, error) {
	rules, err := loadRules(filepath.Join(dir, RuleFile))
	if err != nil {
		return nil, err
	}
	panels, err := loadDashboard(filepath.Join(dir, DashboardFile))
	if err != nil {
		return nil, err
	}
	return append(rules, panels...), nil
}

// loadRules reads a PrometheusRule's groups through rulefmt, as Prometheus
// Operator hands them to Prometheus.
func loadRules(path string) ([]Query, error) {
	b, err := os.ReadFile(path) //nolint:gosec // The kit's own file.
	if err != nil {
		return nil, errors.Wrapf(err, errReadFmt, path)
	}
	var pr struct {
		Spec struct {
			Groups json.RawMessage `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &pr); err != nil {
		return nil, errors.Wrapf(err, errDecodeFmt, path)
	}
	if len(pr.Spec.Groups) == 0 {
		return nil, errors.New(errNoGroups)
	}
	file, err := yaml.JSONToYAML([]byte(`{"groups":` + string(pr.Spec.Groups) + `}`))
	if err != nil {
		return nil, errors.Wrapf(err, errDecodeFmt, path)
	}
	groups, errs := rulefmt.Parse(file, false)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, errors.Errorf(errRulesFmt, path, strings.Join(msgs, "; "))
	}
	var qs []Query
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			qs = append(qs, Query{Where: g.Name + "/" + r.Alert + r.Record, Expr: r.Expr})
		}
	}
	return qs, nil
}

// A dashboard holds what the kit reads of a Grafana dashboard.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// labelValues is Grafana's variable query label_values(SELECTOR, LABEL).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// loadDashboard reads every target of the dashboard's panels, nested rows
// included, and every label_values variable's selector.
func loadDashboard(path string) ([]Query, error) {
	b, err := os.ReadFile(path) //nolint:gosec // The kit's own file.
	if err != nil {
		return nil, errors.Wrapf(err, errReadFmt, path)
	}
	d := dashboard{}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, errors.Wrapf(err, errDecodeFmt, path)
	}
	var qs []Query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				qs = append(qs, Query{Where: "panel " + p.Title, Expr: t.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		q := v.Query
		if m, ok := q.(map[string]any); ok {
			q = m["query"]
		}
		if s, ok := q.(string); ok {
			if m := labelValues.FindStringSubmatch(s); m != nil {
				qs = append(qs, Query{Where: "variable " + v.Name, Expr: m[1]})
			}
		}
	}
	return qs, nil
}

// grafanaVariable is a use of a dashboard variable: $name, ${name} or
// ${name:format}.
var grafanaVariable = regexp.MustCompile(`\$\{[^}]+\}|\$\w+`)

// Names parses every query and returns each metric name they select, with
// the places that use it. Dashboard variables are replaced by values of
// their kind first: a range for Grafana's interval variables, a label value
// for the others.
func Names(qs []Query) (map[string][]string, error) {
	names := map[string][]string{}
	for _, q := range qs {
		expr := grafanaVariable.ReplaceAllStringFunc(q.Expr, func(v string) string {
			if strings.Contains(v, "interval") || strings.Contains(v, "__range") {
				return "5m"
			}
			return "x"
		})
		e, err := parser.ParseExpr(expr)
		if err != nil {
			return nil, errors.Wrapf(err, errParseExprFmt, q.Where, q.Expr)
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				names[metricName(vs)] = append(names[metricName(vs)], q.Where)
			}
			return nil
		})
	}
	for n := range names {
		sort.Strings(names[n])
	}
	return names, nil
}

// metricName is the metric a selector names, by name or by a __name__
// equality matcher.
func metricName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == "__name__" {
			return m.Value
		}
	}
	return ""
}
