{{/* The release's base name, cut to Kubernetes' 63-character limit. */}}
{{- define "askbridge.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "askbridge.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "askbridge.labels" -}}
{{ include "askbridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret the pods read their variables from. */}}
{{- define "askbridge.secretName" -}}
{{- .Values.secret.existingSecret | default (include "askbridge.fullname" .) -}}
{{- end -}}

{{/* The configuration file's text. */}}
{{- define "askbridge.config" -}}
{{- if .Values.config -}}
{{- toYaml .Values.config -}}
{{- else -}}
{{- .Files.Get "files/askbridge.yaml" -}}
{{- end -}}
{{- end -}}

{{/* "true" when the Service carries the metrics port. That port takes no
     token, and each scrape counts the store's open questions, so only a
     Service that stays inside the cluster (ClusterIP, for a
     ServiceMonitor) carries it: a NodePort or LoadBalancer Service would
     open it on every node, or to whoever reaches the balancer. The pods
     are scraped through their annotations whatever the Service. */}}
{{- define "askbridge.metricsOnService" -}}
{{- and .Values.metrics.enabled (eq .Values.service.type "ClusterIP") -}}
{{- end -}}
