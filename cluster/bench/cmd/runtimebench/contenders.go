package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/runlocal"
)

// What a contender is to the table.
const (
	roleOurs  = "ours"
	roleFloor = "floor"
	rolePeer  = "peer"
)

// Placeholders of a contender's arguments and environment, filled in at
// each start.
const (
	placePort    = "{PORT}"
	placeAPIPort = "{API_PORT}"
)

// emulatorOneAtATime is why the emulator is measured at concurrency 1
// only: as in AWS Lambda, where each instance takes one invocation at a
// time, it serves one; sent 16 at once, it panicked (rapidcore's
// server.go:666) and reset every connection after.
const emulatorOneAtATime = "serves one invocation at a time, as a Lambda instance does; 16 at once panicked it"

// invocationsPath is where the Lambda runtime interface emulator takes
// invocations, as AWS Lambda's Invoke API does.
const invocationsPath = "/2015-03-31/functions/function/invocations"

// A contender is one runtime serving the echo handler.
type contender struct {
	language, name, role string
	argv, env            []string
	// path requests are sent to.
	path string
	// missing says why it is left out, when it cannot run here.
	missing string
	// oneAtATime says why it is not measured at concurrency 16.
	oneAtATime string
	rounds     []measured
}

// echoHandlers are our wrappers' echo handlers by language: a function URL
// event's body, decoded, is the result, which the wrapper encodes.
var echoHandlers = map[v1alpha1.Language]map[string]string{
	v1alpha1.LanguagePython: {
		"wrapper":                "import json\n\ndef handler(event, context):\n    return json.loads(event[\"body\"])\n",
		"wrapper, async handler": "import json\n\nasync def handler(event, context):\n    return json.loads(event[\"body\"])\n",
	},
	v1alpha1.LanguageNodeJS: {
		"wrapper": "exports.handler = async (event) => JSON.parse(event.body);\n",
	},
	v1alpha1.LanguageGo: {
		"wrapper": "package function\n\nimport (\n\t\"context\"\n\t\"encoding/json\"\n)\n\nfunc Handle(_ context.Context, event map[string]any) (any, error) {\n\tbody, _ := event[\"body\"].(string)\n\tvar v any\n\terr := json.Unmarshal([]byte(body), &v)\n\treturn v, err\n}\n",
	},
}

// ours lays out and, for Go, builds our wrapper with each echo handler of
// the language, as kubectl lambda run does, below work.
func ours(ctx context.Context, lang v1alpha1.Language, work string) ([]*contender, error) {
	rt, err := render.ResolveRuntime(&v1alpha1.Runtime{Language: &lang}, render.BuildEnv{})
	if err != nil {
		return nil, err
	}
	var out []*contender
	for _, name := range sortedKeys(echoHandlers[lang]) {
		dir, err := os.MkdirTemp(work, string(lang)+"-")
		if err != nil {
			return nil, errors.Wrap(err, errWork)
		}
		files, err := render.InlineFiles(&v1alpha1.InlineSource{Code: echoHandlers[lang][name]}, rt)
		if err != nil {
			return nil, err
		}
		src, err := runlocal.Inline(dir, files)
		if err != nil {
			return nil, err
		}
		p, err := runlocal.Program(dir, src, rt)
		if err != nil {
			return nil, err
		}
		c := &contender{language: string(lang), name: name, role: roleOurs, argv: p.Argv, env: p.Env, path: "/"}
		if err := runlocal.Compile(ctx, p, os.Stdout, os.Stderr); err != nil {
			return nil, err
		}
		if err := runlocal.Tool(p); err != nil {
			c.missing = err.Error()
		}
		out = append(out, c)
	}
	return out, nil
}

// Bare servers doing the same echo with nothing but the language's own
// HTTP server: the body decoded as JSON and the value encoded back, as the
// wrapper and the peers do for the handler. What a wrapper costs is
// measured against these.
const (
	pythonFloor = `import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this each answer
    # waits for the client's delayed ACK, 40 ms on Linux.
    disable_nagle_algorithm = True

    def do_POST(self):
        body = json.dumps(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Echo).serve_forever()
`
	nodeFloor = `const http = require('node:http');
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.from(JSON.stringify(JSON.parse(Buffer.concat(chunks))));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`
	// faasJSRuntime is Knative Functions' Node.js runtime with the echo
	// handler: it hands the handler the decoded body.
	faasJSRuntime = `const { start } = require('faas-js-runtime');
start((context, body) => body, { port: Number(process.env.PORT) });
`

	goFloor = `// Command floor echoes each request's body with net/http alone.
package main

import (
	"encoding/json"
	"net/http"
	"os"
)

func main() {
	http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v any
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}))
}
`
)

// floors are the bare servers of every language; Go's is built below work,
// as small as a program of its own is.
func floors(ctx context.Context, work string) ([]*contender, error) {
	dir := filepath.Join(work, "go-floor")
	if err := runlocal.WriteFiles(dir, map[string]string{"main.go": goFloor, "go.mod": "module floor\n\ngo 1.25\n"}); err != nil {
		return nil, errors.Wrap(err, errWork)
	}
	bin := filepath.Join(dir, "floor")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, errors.Wrapf(err, "cannot build the Go floor: %s", out)
	}
	py, err := script(work, "floor.py", pythonFloor)
	if err != nil {
		return nil, err
	}
	js, err := script(work, "floor.js", nodeFloor)
	if err != nil {
		return nil, err
	}
	return []*contender{
		{language: string(v1alpha1.LanguagePython), name: "http.server (ThreadingHTTPServer)", role: roleFloor, argv: []string{"python3", py}, path: "/"},
		{language: string(v1alpha1.LanguageNodeJS), name: "node:http", role: roleFloor, argv: []string{"node", js}, path: "/"},
		{language: string(v1alpha1.LanguageGo), name: "net/http", role: roleFloor, argv: []string{bin}, path: "/"},
	}, nil
}

// peers are the runtimes users would pick instead, as make runtime-peers
// builds them into dir; one not built is listed with why.
func peers(work, dir string) ([]*contender, error) {
	js, err := script(work, "faas.js", faasJSRuntime)
	if err != nil {
		return nil, err
	}
	modules := filepath.Join(dir, "faas-js-runtime", "node_modules")
	rie := filepath.Join(dir, "aws-lambda-rie")
	return []*contender{
		{
			language: string(v1alpha1.LanguagePython), name: "awslambdaric, Knative's func-python", role: rolePeer,
			missing: "on PyPI only, which this machine cannot reach",
		},
		{
			language: string(v1alpha1.LanguageNodeJS), name: "faas-js-runtime 4.0.1 (Knative Functions)", role: rolePeer,
			argv: []string{"node", js}, env: []string{"NODE_PATH=" + modules}, path: "/",
			missing: notBuilt(modules),
		},
		{
			language: string(v1alpha1.LanguageGo), name: "func-go v0.21.3 (Knative Functions)", role: rolePeer,
			argv: []string{filepath.Join(dir, "func-go-echo")}, env: []string{"LISTEN_ADDRESS=127.0.0.1:" + placePort}, path: "/",
			missing: notBuilt(filepath.Join(dir, "func-go-echo")),
		},
		{
			language: string(v1alpha1.LanguageGo), name: "aws-lambda-go v1.55.1 behind the runtime interface emulator", role: rolePeer,
			argv: []string{rie, "--runtime-interface-emulator-address", "127.0.0.1:" + placePort, "--runtime-api-address", "127.0.0.1:" + placeAPIPort, filepath.Join(dir, "aws-lambda-go-echo")},
			path: invocationsPath, missing: notBuilt(rie) + notBuilt(filepath.Join(dir, "aws-lambda-go-echo")),
			oneAtATime: emulatorOneAtATime,
		},
	}, nil
}

// notBuilt says that a peer's file is missing, or nothing.
func notBuilt(path string) string {
	if _, err := os.Stat(path); err != nil {
		return fmt.Sprintf("%s is not built (make runtime-peers)", filepath.Base(path))
	}
	return ""
}

// script writes a program's source into dir.
func script(dir, name, content string) (string, error) {
	p := filepath.Join(dir, name)
	return p, errors.Wrap(runlocal.WriteFiles(dir, map[string]string{name: content}), errWork)
}
