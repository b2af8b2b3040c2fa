// Package deploy holds the deployment files a team copies (the Kubernetes
// manifests under k8s/, the compose stack's extra files under compose/, and
// the repository's docker-compose.yml) and, in its tests, the checks that
// keep them in step with go.mod, the worker's flags and the workflows.
package deploy
