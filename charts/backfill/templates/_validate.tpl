{{/*
Checks of values that values.schema.json cannot express, each failing with
one line that says what is wrong and how to fix it.
*/}}
{{- define "backfill.validate" -}}
{{- if ge (int .Values.offlinePriorityClass.value) 0 }}
{{- fail (printf "offlinePriorityClass.value=%v: must be below 0, the priority of online pods without a PriorityClass, or training would preempt them (the default is -100)" .Values.offlinePriorityClass.value) }}
{{- end }}
{{- if and .Values.monitoring.serviceMonitor.enabled .Values.monitoring.podMonitor.enabled }}
{{- fail "monitoring.serviceMonitor.enabled and monitoring.podMonitor.enabled are both true: Prometheus would scrape the manager twice; enable one of them" }}
{{- end }}
{{- if eq (int .Values.manager.metricsPort) (int .Values.manager.healthPort) }}
{{- fail (printf "manager.metricsPort and manager.healthPort are both %v: give them different ports" .Values.manager.metricsPort) }}
{{- end }}
{{- end -}}
