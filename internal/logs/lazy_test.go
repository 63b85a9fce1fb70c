package logs

import (
	"errors"
	"io"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestLazy checks that a lazy logger writes exactly what its zap logger
// writes, fields, names and callers alike.
func TestLazy(t *testing.T) {
	cases := map[string]struct {
		reason string
		log    func(logr.Logger)
	}{
		"ValuesThenMessage": {
			reason: "Values given before a message are written with it.",
			log:    func(l logr.Logger) { l.WithValues("request", "a/b").Info("reconciling", "version", 3) },
		},
		"NestedValues": {
			reason: "Values given in steps are written in the order given.",
			log:    func(l logr.Logger) { l.WithValues("a", 1).WithValues("b", 2).Info("m", "c", 3) },
		},
		"NameBetweenValues": {
			reason: "A name does not change the values held.",
			log:    func(l logr.Logger) { l.WithValues("a", 1).WithName("x").WithValues("b", 2).WithName("y").Info("m") },
		},
		"Error": {
			reason: "An error is written with the values held.",
			log:    func(l logr.Logger) { l.WithValues("a", 1).Error(errors.New("boom"), "failed", "b", 2) },
		},
		"DebugOff": {
			reason: "A message at a level the sink does not enable is not written.",
			log:    func(l logr.Logger) { l.WithValues("a", 1).V(1).Info("debug") },
		},
		"Siblings": {
			reason: "Two loggers made from one do not see each other's values.",
			log: func(l logr.Logger) {
				base := l.WithValues("a", 1)
				x, y := base.WithValues("b", 2), base.WithValues("c", 3)
				x.Info("x")
				y.Info("y")
				base.Info("base")
			},
		},
		"CallDepth": {
			reason: "A helper that asks for a deeper caller gets the same caller.",
			log:    func(l logr.Logger) { helper(l.WithValues("a", 1)) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want, got := written(t, func(l logr.Logger) logr.Logger { return l }, tc.log), written(t, Lazy, tc.log)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nLazy(...): -zap's own, +lazy:\n%s", tc.reason, diff)
			}
		})
	}
}

func helper(l logr.Logger) { l.WithCallDepth(1).Info("from a helper") }

// An entry is what a zap core was asked to write, without its time.
type entry struct {
	Level   zapcore.Level
	Logger  string
	Message string
	Caller  string
	Fields  map[string]any
}

// written runs log against a zap logger with callers, wrapped by wrap, and
// returns what it wrote.
func written(t *testing.T, wrap func(logr.Logger) logr.Logger, log func(logr.Logger)) []entry {
	t.Helper()
	core, seen := observer.New(zapcore.InfoLevel)
	log(wrap(zapr.NewLogger(zap.New(core, zap.AddCaller()))))
	var out []entry
	for _, e := range seen.AllUntimed() {
		out = append(out, entry{Level: e.Level, Logger: e.LoggerName, Message: e.Message, Caller: e.Caller.String(), Fields: e.ContextMap()})
	}
	return out
}

// BenchmarkWithValues is the cost of a reconcile's logger, as
// crossplane-runtime's managed reconciler makes it, when debug is off.
func BenchmarkWithValues(b *testing.B) {
	// As the provider writes: JSON, debug off.
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	direct := zapr.NewLogger(zap.New(core))
	for name, l := range map[string]logr.Logger{"zap": direct, "lazy": Lazy(direct)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := l.WithValues("request", "ns/name").WithValues("uid", "0f0e", "version", "42", "external-name", "name")
				r.V(1).Info("Reconciling")
			}
		})
	}
}
