// Package fuzz holds the render core's fuzz targets. They live apart from
// render's own tests because go test -fuzz instruments every package the
// test binary links, and render's tests link a real API server's client:
// instrumenting that took minutes of a cold CI run.
package fuzz
