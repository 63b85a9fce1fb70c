// Package logs holds what the provider's logging needs beyond logr.
package logs

import (
	"slices"

	"github.com/go-logr/logr"
)

// Lazy returns a logger that writes what l writes, but whose WithValues
// only remembers the values until a message is written at a level l
// enables. zap encodes values at WithValues, into a buffer it never gives
// back: the request, version and external name that crossplane-runtime's
// managed reconciler adds to every reconcile's logger cost a kilobyte or
// more each, for debug messages that are off unless --debug is given.
func Lazy(l logr.Logger) logr.Logger {
	s := l.GetSink()
	if s == nil {
		return l
	}
	// lazySink's own frame lies between the caller and s.
	if cd, ok := s.(logr.CallDepthLogSink); ok {
		s = cd.WithCallDepth(1)
	}
	return logr.New(&lazySink{sink: s}).V(l.GetV())
}

// A lazySink holds values for a sink until a message needs them.
type lazySink struct {
	sink   logr.LogSink
	values []any
}

// Init does nothing: the sink was initialised with the logger it came from.
func (s *lazySink) Init(logr.RuntimeInfo) {}

func (s *lazySink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s *lazySink) Info(level int, msg string, kv ...any) {
	s.sink.Info(level, msg, s.with(kv)...)
}

func (s *lazySink) Error(err error, msg string, kv ...any) {
	s.sink.Error(err, msg, s.with(kv)...)
}

func (s *lazySink) WithValues(kv ...any) logr.LogSink {
	return &lazySink{sink: s.sink, values: s.with(kv)}
}

func (s *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{sink: s.sink.WithName(name), values: s.values}
}

func (s *lazySink) WithCallDepth(depth int) logr.LogSink {
	cd, ok := s.sink.(logr.CallDepthLogSink)
	if !ok {
		return s
	}
	return &lazySink{sink: cd.WithCallDepth(depth), values: s.values}
}

// with is the values held, then kv. The held ones are clipped so that no
// two loggers derived from one append into the same array.
func (s *lazySink) with(kv []any) []any {
	if len(s.values) == 0 {
		return kv
	}
	return append(slices.Clip(s.values), kv...)
}
