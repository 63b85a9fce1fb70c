#!/bin/sh
# lambda_build.sh SRC WRAPPER OUT builds the Go function in SRC with the
# wrapper as its main package. The wrapper imports the function's package by
# the module path of SRC/go.mod, which is only known once the source is there.
set -eu
src=$1 wrapper=$2 out=$3
cd "$src"
[ -f go.mod ] || go mod init function
module=$(go list -m)
mkdir -p zz_lambda_wrapper
sed "s#LAMBDA_FUNCTION_MODULE#${module}#" "$wrapper" > zz_lambda_wrapper/main.go
go build -trimpath -o "$out" ./zz_lambda_wrapper
