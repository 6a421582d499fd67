{{/*
The prefix of every object name: the release name when it already says
backfill, else "<release>-backfill".
*/}}
{{- define "backfill.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The manager's ServiceAccount, ClusterRole, binding and Deployment. */}}
{{- define "backfill.managerName" -}}
{{- include "backfill.fullname" . }}-manager
{{- end -}}

{{/*
Labels that select the manager's pods. They are the same in the kustomize
install (config/), so they never change across upgrades.
*/}}
{{- define "backfill.selectorLabels" -}}
app.kubernetes.io/name: backfill
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{/*
Labels of every object: the kustomize install's, plus Helm's own
(helm.sh/chart, managed-by, version).
*/}}
{{- define "backfill.labels" -}}
app.kubernetes.io/name: backfill
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: backfill
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Leader election is on with more than one replica, or when asked. */}}
{{- define "backfill.leaderElect" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicaCount) 1) -}}
true
{{- else -}}
false
{{- end -}}
{{- end -}}

{{/* The Service of the progress report endpoint. */}}
{{- define "backfill.reportsName" -}}
{{- include "backfill.fullname" . }}-reports
{{- end -}}

{{/* The Secret of the report endpoint's certificate, made or given. */}}
{{- define "backfill.reportsSecret" -}}
{{- .Values.reports.existingSecret | default (printf "%s-reports-tls" (include "backfill.managerName" .)) -}}
{{- end -}}

{{/*
The node agent's DaemonSet, ServiceAccount, ClusterRole, binding, Service,
NetworkPolicy and monitors.
*/}}
{{- define "backfill.nodeAgentName" -}}
{{- include "backfill.fullname" . }}-node-agent
{{- end -}}

{{/*
The node agent's namespace, apart from the manager's: its pods need the
privileged Pod Security level, the manager's namespace holds the
restricted one.
*/}}
{{- define "backfill.nodeAgentNamespace" -}}
{{- .Values.nodeAgent.namespace.name | default (include "backfill.nodeAgentName" .) -}}
{{- end -}}

{{/* Labels that select the node agent's pods, the same in config/nodeagent. */}}
{{- define "backfill.nodeAgentSelectorLabels" -}}
app.kubernetes.io/name: backfill
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: node-agent
{{- end -}}
