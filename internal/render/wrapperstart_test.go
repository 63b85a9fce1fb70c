package render

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
)

// BenchmarkWrapperStart measures each language's wrapper from its
// process's start until it answers its readiness path, as Knative's
// queue-proxy probes it: the part of a cold start that is ours. It runs
// the wrappers as their Dockerfiles do, under this machine's Python and
// Node.js, and the Go wrapper built as lambda_build.sh builds it.
func BenchmarkWrapperStart(b *testing.B) {
	for _, lang := range []v1alpha1.Language{v1alpha1.LanguageGo, v1alpha1.LanguageNodeJS, v1alpha1.LanguagePython} {
		b.Run(string(lang), func(b *testing.B) {
			p := newWrapperProgram(b, lang, "")
			for b.Loop() {
				b.StopTimer()
				port := loopback.Port(b)
				cmd, logs := p.command(port)
				b.StartTimer()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				err := answers(b.Context(), fmt.Sprintf("http://127.0.0.1:%d%s", port, PathReady))
				b.StopTimer()
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				if err != nil {
					b.Fatalf("%v; the wrapper wrote:\n%s", err, logs.String())
				}
				b.StartTimer()
			}
		})
	}
}

// answers polls url until it answers 200, as tightly as a probe that
// retries at once.
func answers(ctx context.Context, url string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if r, err := http.DefaultClient.Do(req); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("%s did not answer 200 within 10s", url)
}
