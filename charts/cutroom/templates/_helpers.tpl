{{/* Chart name, overridable. */}}
{{- define "cutroom.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped name; the release name alone when it already contains the chart name. */}}
{{- define "cutroom.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of one component's objects: (dict "ctx" $ "component" "api"). */}}
{{- define "cutroom.componentName" -}}
{{- printf "%s-%s" (include "cutroom.fullname" .ctx) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "cutroom.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select one component's pods: (dict "ctx" $ "component" "api"). */}}
{{- define "cutroom.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cutroom.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Every object's labels: (dict "ctx" $ "component" "api"). */}}
{{- define "cutroom.labels" -}}
helm.sh/chart: {{ include "cutroom.chart" .ctx }}
{{ include "cutroom.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: cutroom
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Service account of the api or operator, from its values' serviceAccount: (dict "ctx" $ "component" "api"). */}}
{{- define "cutroom.serviceAccountName" -}}
{{- $serviceAccount := (index .ctx.Values .component).serviceAccount }}
{{- if $serviceAccount.create }}
{{- default (include "cutroom.componentName" .) $serviceAccount.name }}
{{- else }}
{{- default "default" $serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Service account of one job kind: (dict "ctx" $ "kind" "render"). */}}
{{- define "cutroom.jobServiceAccountName" -}}
{{- include "cutroom.componentName" (dict "ctx" .ctx "component" (printf "%s-job" .kind)) }}
{{- end }}

{{- define "cutroom.configMapName" -}}
{{- include "cutroom.fullname" . }}
{{- end }}

{{/* The Secret holding credentials: the user's existingSecret or the chart's own. */}}
{{- define "cutroom.secretName" -}}
{{- default (include "cutroom.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* The job pods' Secret (S3 keys only): the user's existingJobSecret or the chart's own. */}}
{{- define "cutroom.jobSecretName" -}}
{{- default (include "cutroom.componentName" (dict "ctx" . "component" "job")) .Values.existingJobSecret }}
{{- end }}

{{/* The job pods' ConfigMap (no secrets, no api.settings). */}}
{{- define "cutroom.jobConfigMapName" -}}
{{- include "cutroom.componentName" (dict "ctx" . "component" "job") }}
{{- end }}

{{- define "cutroom.leaseName" -}}
{{- default (include "cutroom.componentName" (dict "ctx" . "component" "operator")) .Values.operator.leaderElection.leaseName }}
{{- end }}

{{/* repository:tag[@digest]; the tag defaults to appVersion: (dict "ctx" $ "image" .Values.api.image). */}}
{{- define "cutroom.image" -}}
{{- $ref := printf "%s:%s" .image.repository (default .ctx.Chart.AppVersion .image.tag) }}
{{- if .image.digest }}
{{- $ref = printf "%s@%s" $ref .image.digest }}
{{- end }}
{{- $ref }}
{{- end }}

{{/* "true" when the chart runs the shared Whisper Deployment and its Service, else empty. */}}
{{- define "cutroom.whisperShared" -}}
{{- if and .Values.whisper.enabled (eq .Values.whisper.placement "shared") }}true{{ end }}
{{- end }}

{{/* Transcription server address: the chart's shared Whisper server, else the external one; empty with sidecar placement (the operator gives each analysis pod its own). */}}
{{- define "cutroom.whisperBaseUrl" -}}
{{- if include "cutroom.whisperShared" . }}
{{- printf "http://%s.%s.svc:%v/v1" (include "cutroom.componentName" (dict "ctx" . "component" "whisper")) .Release.Namespace .Values.whisper.port }}
{{- else if not .Values.whisper.enabled }}
{{- .Values.whisper.external.baseUrl }}
{{- end }}
{{- end }}

{{- define "cutroom.whisperModel" -}}
{{- if .Values.whisper.enabled }}
{{- .Values.whisper.model }}
{{- else }}
{{- .Values.whisper.external.model }}
{{- end }}
{{- end }}

{{/* PUBLIC_BASE_URL: the configured one, else the first ingress host. */}}
{{- define "cutroom.publicBaseUrl" -}}
{{- if .Values.config.publicBaseUrl }}
{{- .Values.config.publicBaseUrl }}
{{- else if and .Values.api.ingress.enabled .Values.api.ingress.hosts }}
{{- $host := (first .Values.api.ingress.hosts).host }}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.api.ingress.tls) 0)) $host }}
{{- end }}
{{- end }}

{{/* Environment every Cutroom process reads: the ConfigMap and the Secret. */}}
{{- define "cutroom.envFrom" -}}
- configMapRef:
    name: {{ include "cutroom.configMapName" . }}
- secretRef:
    name: {{ include "cutroom.secretName" . }}
{{- end }}

{{/* Rolls pods when the ConfigMap or the chart's Secret changes. */}}
{{- define "cutroom.configChecksum" -}}
checksum/config: {{ include (print .Template.BasePath "/config/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print .Template.BasePath "/config/secret.yaml") . | sha256sum }}
{{- end }}

{{/* Writable /tmp on a read-only root filesystem: (dict "sizeLimit" "256Mi"). */}}
{{- define "cutroom.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .sizeLimit }}
{{- end }}
