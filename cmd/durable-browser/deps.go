package main

import (
	_ "github.com/JohannesKaufmann/html-to-markdown/v2"
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/credentials"
	_ "github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/durable-browser/durable-browser/internal/devstack"
	_ "github.com/go-rod/rod"
	_ "github.com/go-rod/stealth"
	_ "github.com/google/uuid"
	_ "github.com/temporalio/ui-server/v2/server"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/sdk/testsuite"
	_ "go.temporal.io/sdk/worker"
)

func main() {}
