// Package deploy holds what it takes to run askbridge elsewhere: the
// image (Dockerfile), a compose file on Redis, a Helm chart, a systemd unit
// and a Grafana dashboard. It has no Go code of its own; its tests prove
// each of those files here, short of a running cluster: the image is built
// with buildah and run from its own filesystem, the chart is linted and
// rendered into strictly decoded Kubernetes objects, the compose file is
// loaded with the compose specification's loader, and the unit is checked
// by systemd-analyze.
package deploy
