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
{{- if and .Values.reports.enabled (has (int .Values.reports.port) (list (int .Values.manager.metricsPort) (int .Values.manager.healthPort))) }}
{{- fail (printf "reports.port=%v: the manager's metrics or health endpoint has it; give the report endpoint a port of its own (the default is 9443)" .Values.reports.port) }}
{{- end }}
{{- $qps := float64 .Values.manager.kubeAPIQPS }}
{{- if and (gt $qps 0.0) (lt (float64 .Values.manager.kubeAPIBurst) $qps) }}
{{- fail (printf "manager.kubeAPIBurst=%v is below manager.kubeAPIQPS=%v: the token bucket would not hold one second of requests; raise it to at least kubeAPIQPS (twice is usual)" .Values.manager.kubeAPIBurst .Values.manager.kubeAPIQPS) }}
{{- end }}
{{- include "backfill.validateReclaim" . }}
{{- include "backfill.validateReportCertificate" . }}
{{- include "backfill.validateNodeAgent" . }}
{{- include "backfill.validateAlertRelay" . }}
{{- include "backfill.validateAlertmanagerConfig" . }}
{{- end -}}

{{/*
Checks of where the report endpoint's certificate comes from: the chart's
own Secret, reports.existingSecret or cert-manager, one at a time.
*/}}
{{- define "backfill.validateReportCertificate" -}}
{{- $r := .Values.reports }}
{{- $cm := $r.certManager }}
{{- if and $r.existingSecret $cm.enabled }}
{{- fail (printf "reports.existingSecret=%s and reports.certManager.enabled=true both give the report endpoint's certificate: keep existingSecret for a Secret you make yourself, or certManager to have cert-manager issue it, not both" $r.existingSecret) }}
{{- end }}
{{- if and (not $r.enabled) $cm.enabled }}
{{- fail "reports.certManager.enabled=true with reports.enabled=false: nothing would use the certificate; turn reports on, or certManager off" }}
{{- end }}
{{- if and (not $r.enabled) $r.existingSecret }}
{{- fail (printf "reports.existingSecret=%s with reports.enabled=false: nothing would mount the Secret; turn reports on, or remove existingSecret" $r.existingSecret) }}
{{- end }}
{{- if and $cm.issuerRef.name (not $cm.enabled) }}
{{- fail (printf "reports.certManager.issuerRef.name=%s with reports.certManager.enabled=false: cert-manager is not asked for the certificate; set reports.certManager.enabled=true to use the issuer, or remove issuerRef.name" $cm.issuerRef.name) }}
{{- end }}
{{- if and $cm.enabled (not $cm.issuerRef.name) (or (ne $cm.issuerRef.kind "Issuer") (ne $cm.issuerRef.group "cert-manager.io")) }}
{{- fail (printf "reports.certManager.issuerRef has kind %s and group %s but no name: name your issuer in issuerRef.name, or leave kind and group at Issuer and cert-manager.io for the chart's own CA" $cm.issuerRef.kind $cm.issuerRef.group) }}
{{- end }}
{{- end -}}

{{/*
Checks of reclaim.* across values, as `backfill manager` checks its
--reclaim-* flags (values.schema.json checks each value alone).
*/}}
{{- define "backfill.validateReclaim" -}}
{{- $r := .Values.reclaim }}
{{- if gt (int $r.cpuEvictionMargin) (int $r.cpuMargin) }}
{{- fail (printf "reclaim.cpuEvictionMargin=%v: must be at most reclaim.cpuMargin (%v), the part of the margin online use may take before offline pods are evicted; lower it or raise reclaim.cpuMargin" $r.cpuEvictionMargin $r.cpuMargin) }}
{{- end }}
{{- if gt (int $r.memoryEvictionMargin) (int $r.memoryMargin) }}
{{- fail (printf "reclaim.memoryEvictionMargin=%v: must be at most reclaim.memoryMargin (%v), the part of the margin online use may take before offline pods are evicted; lower it or raise reclaim.memoryMargin" $r.memoryEvictionMargin $r.memoryMargin) }}
{{- end }}
{{- $interval := include "backfill.durationMillis" $r.interval }}
{{- $window := include "backfill.durationMillis" $r.window }}
{{- $delay := include "backfill.durationMillis" $r.cpuEvictionDelay }}
{{- $stale := include "backfill.durationMillis" $r.staleAfter }}
{{- if and $window $interval (lt (float64 $window) (float64 $interval)) }}
{{- fail (printf "reclaim.window=%v: must be at least reclaim.interval (%v), since the online peak is taken over several decisions; lengthen it (the default is 15m) or shorten reclaim.interval" $r.window $r.interval) }}
{{- end }}
{{- if and $delay $window (gt (float64 $delay) (float64 $window)) }}
{{- fail (printf "reclaim.cpuEvictionDelay=%v: must be at most reclaim.window (%v); shorten it (the default is 15m, as the window) or lengthen reclaim.window" $r.cpuEvictionDelay $r.window) }}
{{- end }}
{{- if and $stale $interval (lt (float64 $stale) (float64 $interval)) }}
{{- fail (printf "reclaim.staleAfter=%v: must be at least reclaim.interval (%v), or every node would freeze between two decisions; lengthen it (the default is 3m)" $r.staleAfter $r.interval) }}
{{- end }}
{{- $onlineWindow := include "backfill.durationMillis" $r.onlineWindow }}
{{- $evictAfter := include "backfill.durationMillis" $r.onlineEvictAfter }}
{{- if and $onlineWindow (lt (float64 $onlineWindow) 1000.0) }}
{{- fail (printf "reclaim.onlineWindow=%v: must be at least 1s, and at least two of Prometheus's scrape intervals, e.g. 1m" $r.onlineWindow) }}
{{- end }}
{{- if and $onlineWindow $evictAfter (ge (float64 $onlineWindow) (float64 $evictAfter)) }}
{{- fail (printf "reclaim.onlineWindow=%v is not shorter than reclaim.onlineEvictAfter=%v: a reading of the online signal stays harmful for a window after the harm ends, so a blip would read as harm that lasted and evict; shorten reclaim.onlineWindow or lengthen reclaim.onlineEvictAfter (the defaults are 1m and 2m)" $r.onlineWindow $r.onlineEvictAfter) }}
{{- end }}
{{- if and $r.enabled (eq $r.usageSource "prometheus") }}
{{- if not .Values.manager.colocationMetrics }}
{{- fail "reclaim.usageSource=prometheus needs manager.colocationMetrics=true: the manager tells offline from online use in Prometheus by its own backfill_offline_pod_info; set manager.colocationMetrics=true or reclaim.usageSource=metrics-api" }}
{{- end }}
{{- $rate := include "backfill.durationMillis" $r.prometheusRateWindow }}
{{- if and $rate (lt (float64 $rate) 1000.0) }}
{{- fail (printf "reclaim.prometheusRateWindow=%v: must be at least 1s, and at least four of Prometheus's scrape intervals, e.g. 2m" $r.prometheusRateWindow) }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Checks of nodeAgent.* across values, as `backfill node-agent` checks its
flags (values.schema.json checks each value alone).
*/}}
{{- define "backfill.validateNodeAgent" -}}
{{- $a := .Values.nodeAgent }}
{{- if $a.enabled }}
{{- if gt (int $a.cpuFloor) (int $a.cpuThreshold) }}
{{- fail (printf "nodeAgent.cpuFloor=%v: must be at most nodeAgent.cpuThreshold (%v), since offline pods can keep no more than the threshold lets all pods use; lower it or raise nodeAgent.cpuThreshold" $a.cpuFloor $a.cpuThreshold) }}
{{- end }}
{{- if and (gt (int $a.cpuActivation) 0) (ge (int $a.cpuActivationBand) (int $a.cpuActivation)) }}
{{- fail (printf "nodeAgent.cpuActivationBand=%v: must be below nodeAgent.cpuActivation (%v), or a ceiling once set is never released; lower the band or raise the activation" $a.cpuActivationBand $a.cpuActivation) }}
{{- end }}
{{- $interval := include "backfill.durationMillis" $a.interval }}
{{- if and $interval (or (lt (float64 $interval) 100.0) (gt (float64 $interval) 60000.0)) }}
{{- fail (printf "nodeAgent.interval=%v: must be from 100ms to 1m: the kubelet resets cgroups about once a minute and online pods need an answer within seconds (the default is 1s)" $a.interval) }}
{{- end }}
{{- $ns := include "backfill.nodeAgentNamespace" . }}
{{- if eq $ns .Release.Namespace }}
{{- fail (printf "nodeAgent.namespace.name=%s is the release's namespace: the node agent needs the privileged Pod Security level (root, the node's PID namespace and cgroups), which the manager's namespace must not have; leave nodeAgent.namespace.name empty for %s-node-agent, or name another namespace" $ns (include "backfill.fullname" .)) }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
The milliseconds of a duration such as 1m30s, the way Go's
time.ParseDuration reads it; empty for a string that is not one.
*/}}
{{- define "backfill.durationMillis" -}}
{{- $d := toString . }}
{{- if regexMatch "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$" $d }}
{{- $ms := 0.0 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h)" $d -1 }}
{{- $unit := regexFind "(ms|s|m|h)$" . }}
{{- $n := float64 (trimSuffix $unit .) }}
{{- $ms = addf $ms (mulf $n (get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000) $unit)) }}
{{- end }}
{{- $ms }}
{{- end }}
{{- end -}}

{{/*
Checks of alerting.alertmanagerConfig: the Alertmanager passes it backfill's
alerts, every receiver it turns on is complete, and some receiver takes
them.
*/}}
{{- define "backfill.validateAlertmanagerConfig" -}}
{{- $c := .Values.alerting.alertmanagerConfig }}
{{- if $c.enabled }}
{{- $p := "alerting.alertmanagerConfig" }}
{{- if eq $c.matcherStrategy "OnNamespace" }}
{{- fail (printf "%s.matcherStrategy=OnNamespace: an Alertmanager with this strategy passes the config only alerts labelled namespace=%s, and would drop every node alert and every other namespace's TFJob alert; set the Alertmanager's alertmanagerConfigMatcherStrategy.type to None (kube-prometheus-stack: alertmanager.alertmanagerSpec.alertmanagerConfigMatcherStrategy.type=None), then %s.matcherStrategy=None (see docs/alerting.md)" $p ($c.namespace | default .Release.Namespace) $p) }}
{{- end }}
{{- if and (eq $c.matcherStrategy "OnNamespaceExceptForAlertmanagerNamespace") (not $c.namespace) }}
{{- fail (printf "%s.matcherStrategy=OnNamespaceExceptForAlertmanagerNamespace passes all alerts only to configs in the Alertmanager's own namespace: set %s.namespace to it (and create the receivers' Secrets there)" $p $p) }}
{{- end }}
{{- $r := $c.receivers }}
{{- with $r.wechat }}
{{- if .enabled }}
{{- if or (not .corpID) (not .agentID) }}
{{- fail (printf "%s.receivers.wechat: corpID and agentID are required (My Company > Company ID, and the application's AgentId)" $p) }}
{{- end }}
{{- if not (or .toUser .toParty .toTag) }}
{{- fail (printf "%s.receivers.wechat: give toUser, toParty or toTag, whom the application's messages go to" $p) }}
{{- end }}
{{- if or (not .apiSecret.name) (not .apiSecret.key) }}
{{- fail (printf "%s.receivers.wechat.apiSecret: name and key of the Secret holding the application's secret are required (kubectl create secret generic wecom-app --from-literal=secret=...); the secret is never a value" $p) }}
{{- end }}
{{- end }}
{{- end }}
{{- with $r.email }}
{{- if .enabled }}
{{- if or (not .to) (not .from) (not .smarthost) }}
{{- fail (printf "%s.receivers.email: to, from and smarthost (host:port of the SMTP server) are required" $p) }}
{{- end }}
{{- if and .authPassword.name (not .authPassword.key) }}
{{- fail (printf "%s.receivers.email.authPassword: name %s without key; name the key of the Secret that holds the password" $p .authPassword.name) }}
{{- end }}
{{- if and .authUsername (not .authPassword.name) }}
{{- fail (printf "%s.receivers.email: authUsername %s without authPassword; name the Secret key of the password, or remove authUsername to send without authentication" $p .authUsername) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $i, $w := $r.webhooks }}
{{- $secret := and $w.urlSecret $w.urlSecret.name }}
{{- if eq (not $w.url) (not $secret) }}
{{- fail (printf "%s.receivers.webhooks[%d]: give url or urlSecret (name and key of a Secret holding the URL), one of them" $p $i) }}
{{- end }}
{{- if and $secret (not $w.urlSecret.key) }}
{{- fail (printf "%s.receivers.webhooks[%d].urlSecret: name %s without key; name the key that holds the URL" $p $i $w.urlSecret.name) }}
{{- end }}
{{- end }}
{{- $receivers := include "backfill.alertmanagerReceivers" . | fromYaml }}
{{- if and (le (len $receivers.critical) 1) (le (len $receivers.warning) 1) }}
{{- fail (printf "%s.enabled=true with no receiver: enable receivers.wechat or receivers.email, add receivers.webhooks, or enable alerting.relay with a robot; or turn the AlertmanagerConfig off" $p) }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Checks of alerting.relay: a relay runs with a robot to send to, and a
robot's Secret is named only when the relay runs.
*/}}
{{- define "backfill.validateAlertRelay" -}}
{{- $r := .Values.alerting.relay }}
{{- $ding := $r.dingtalk.urlSecret.name }}
{{- $sign := $r.dingtalk.signSecret.name }}
{{- $wecom := $r.wecom.urlSecret.name }}
{{- if $r.enabled }}
{{- if not (or $ding $wecom) }}
{{- fail "alerting.relay.enabled=true with no robot: set alerting.relay.dingtalk.urlSecret.name or alerting.relay.wecom.urlSecret.name to a Secret holding the robot's webhook URL (kubectl create secret generic dingtalk-robot --from-literal=url=https://...), or turn the relay off" }}
{{- end }}
{{- if and $sign (not $ding) }}
{{- fail (printf "alerting.relay.dingtalk.signSecret.name=%s without dingtalk.urlSecret.name: the secret signs requests to a DingTalk robot; name the Secret holding its URL too, or remove signSecret.name" $sign) }}
{{- end }}
{{- else if or $ding $sign $wecom }}
{{- fail "alerting.relay names a robot's Secret but alerting.relay.enabled=false: nothing would use it; set alerting.relay.enabled=true to run the relay, or remove the Secret names" }}
{{- end }}
{{- end -}}
