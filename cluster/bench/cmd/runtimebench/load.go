package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/internal/runlocal"
)

const (
	errWork       = "cannot prepare the contenders"
	errFmtSpawn   = "cannot start %s"
	errFmtNoServe = "%s did not answer within %s"
	errFmtEcho    = "%s answered %d %q, not the echo of %s"
)

// body is what every contender is sent and must answer with.
var body = []byte(`{"id": 42, "name": "ada", "items": [1, 2, 3], "note": "an order to echo"}`)

// startWithin bounds a start: the emulator starts its runtime at the first
// invocation.
const startWithin = time.Minute

// A running contender is one process serving on its port.
type running struct {
	cmd    *exec.Cmd
	url    string
	exited chan error
	client *http.Client
}

// spawn starts the contender on free ports, its output discarded, in a
// process group of its own that dies with this program.
func (c *contender) spawn() (*running, error) {
	port, err := runlocal.FreePort(context.Background())
	if err != nil {
		return nil, err
	}
	apiPort, err := runlocal.FreePort(context.Background())
	if err != nil {
		return nil, err
	}
	fill := strings.NewReplacer(placePort, strconv.Itoa(port), placeAPIPort, strconv.Itoa(apiPort))
	argv := make([]string, len(c.argv))
	for i, a := range c.argv {
		argv[i] = fill.Replace(a)
	}
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:noctx // The contender's own program; killed by group.
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	for _, e := range c.env {
		cmd.Env = append(cmd.Env, fill.Replace(e))
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtSpawn, c.name)
	}
	defer null.Close() //nolint:errcheck // The child holds its own.
	cmd.Stdout, cmd.Stderr = null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, errors.Wrapf(err, errFmtSpawn, c.name)
	}
	r := &running{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d%s", port, c.path), exited: make(chan error, 1), client: newClient()}
	go func() { r.exited <- cmd.Wait() }()
	return r, nil
}

// newClient keeps a connection per worker, as a load balancer in front of
// a function does.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
}

// stop kills the contender's process group and waits until it is gone.
func (r *running) stop() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.exited //nolint:errcheck // Killed: how it exited says nothing.
	r.client.CloseIdleConnections()
}

// call sends the body once and returns the status and answer.
func (r *running) call(ctx context.Context) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close() //nolint:errcheck // Read to the end.
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// firstAnswer polls until the contender answers 2xx, checks that it echoed
// the body, and returns when it did, measured from start.
func (r *running) firstAnswer(ctx context.Context, name string, start time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, startWithin)
	defer cancel()
	for {
		status, answer, err := r.call(ctx)
		if err == nil && status/100 == 2 {
			took := time.Since(start)
			if !sameJSON(answer, body) {
				return 0, errors.Errorf(errFmtEcho, name, status, answer, body)
			}
			return took, nil
		}
		select {
		case err := <-r.exited:
			return 0, errors.Errorf(errFmtSpawn+": it exited: %v", name, err)
		case <-ctx.Done():
			return 0, errors.Errorf(errFmtNoServe, name, startWithin)
		case <-time.After(time.Millisecond):
		}
	}
}

// sameJSON says whether two documents are the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// coldStart is the time from spawning the contender to its first 2xx.
func (c *contender) coldStart(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	r, err := c.spawn()
	if err != nil {
		return 0, err
	}
	defer r.stop()
	return r.firstAnswer(ctx, c.name, start)
}

// A load is what concurrency workers, each sending the next request when
// the last was answered, got in a while.
type load struct {
	latencies []time.Duration
	errors    int
	took      time.Duration
}

// drive sends requests from concurrency workers for d. A request in
// flight at the end is waited for, not cut off: the emulator reset every
// connection after a caller gave up on an invocation.
func (r *running) drive(ctx context.Context, concurrency int, d time.Duration) load {
	var mu sync.Mutex
	l := load{}
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for range concurrency {
		wg.Go(func() {
			var mine []time.Duration
			failed := 0
			for ctx.Err() == nil && time.Now().Before(end) {
				t := time.Now()
				status, _, err := r.call(ctx)
				switch {
				case ctx.Err() != nil:
				case err != nil || status/100 != 2:
					failed++
				default:
					mine = append(mine, time.Since(t))
				}
			}
			mu.Lock()
			l.latencies = append(l.latencies, mine...)
			l.errors += failed
			mu.Unlock()
		})
	}
	wg.Wait()
	l.took = time.Since(start)
	return l
}

// A measured round of one contender.
type measured struct {
	cold      []time.Duration
	one, many load
	rss       uint64
}

// measureRound measures a contender once: its cold starts, then, started
// once more and warmed, a while at concurrency 1 and a while at 16, and its
// resident memory after them.
func (c *contender) measureRound(ctx context.Context, s settings) (measured, error) {
	var m measured
	for range s.colds {
		took, err := c.coldStart(ctx)
		if err != nil {
			return m, err
		}
		m.cold = append(m.cold, took)
	}
	r, err := c.spawn()
	if err != nil {
		return m, err
	}
	defer r.stop()
	if _, err := r.firstAnswer(ctx, c.name, time.Now()); err != nil {
		return m, err
	}
	warm := manyWorkers
	if c.oneAtATime != "" {
		warm = 1
	}
	r.drive(ctx, warm, s.duration/3)
	m.one = r.drive(ctx, 1, s.duration)
	if c.oneAtATime == "" {
		m.many = r.drive(ctx, manyWorkers, s.duration)
	}
	m.rss = treeRSS(r.cmd.Process.Pid)
	return m, ctx.Err()
}

// manyWorkers is the higher concurrency measured.
const manyWorkers = 16

// treeRSS is the resident memory of a process and every process of its
// group: the emulator and the runtime it starts, together.
func treeRSS(pgid int) uint64 {
	var total uint64
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state, ppid, pgrp.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
		if err != nil {
			continue
		}
		if u, err := process.ReadUsage(pid); err == nil {
			total += u.RSS
		}
	}
	return total
}
