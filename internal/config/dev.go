package config

// What `durable-browser dev` serves on loopback, for the client verbs that
// point at it by default. They live here, not in devstack, so a client verb
// can name them without linking the embedded servers.
const (
	// DevS3AccessKey and DevS3SecretKey protect nothing: the dev S3 server
	// only listens on loopback.
	DevS3AccessKey = "durable-browser"
	DevS3SecretKey = "durable-browser-dev-only"
	DevS3Bucket    = "evidence"
)
