#!/bin/sh
# lambda_build.sh SRC WRAPPER OUT HANDLER builds the Go function in SRC with
# the wrapper as its main package, beside a handle that calls the function
# package's exported HANDLER. handle imports that package by the module path
# of SRC/go.mod, which is only known once the source is there.
set -eu
src=$1 wrapper=$2 out=$3 handler=$4
cd "$src"
[ -f go.mod ] || go mod init function
module=$(go list -m)
mkdir -p zz_lambda_wrapper
cp "$wrapper" zz_lambda_wrapper/main.go
cat > zz_lambda_wrapper/handle.go <<GO
package main

import (
	"context"

	function "${module}"
)

func handle(ctx context.Context, event map[string]any) (any, error) {
	return function.${handler}(ctx, event)
}
GO
go build -trimpath -o "$out" ./zz_lambda_wrapper
