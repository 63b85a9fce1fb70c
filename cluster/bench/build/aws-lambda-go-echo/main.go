// Command aws-lambda-go-echo is a Lambda function, on aws-lambda-go, that
// returns its event: the runtime interface emulator starts it as its
// bootstrap.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(_ context.Context, event json.RawMessage) (json.RawMessage, error) {
		return event, nil
	})
}
