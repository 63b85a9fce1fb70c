// The echo handler on AWS Lambda's Go runtime, aws-lambda-go, for
// runtimebench, which runs it behind the runtime interface emulator.
module github.com/knative-lambda/provider-knative-lambda/cluster/bench/build/aws-lambda-go-echo

go 1.26

require github.com/aws/aws-lambda-go v1.55.1
