{{/* The labels config/ puts on the operator's objects (and its pods' selector). */}}
{{- define "hyperspool.operatorLabels" -}}
app.kubernetes.io/name: hyperspool
app.kubernetes.io/component: operator
{{- end }}

{{/* Whether the chart makes the database Secret: for the bundled PostgreSQL or a URL given in values. */}}
{{- define "hyperspool.makesDatabaseSecret" -}}
{{- if and .Values.postgresql.enabled .Values.database.url }}
{{- fail "database.url and postgresql.enabled name two databases: set one" }}
{{- end }}
{{- if or .Values.postgresql.enabled .Values.database.url }}true{{ end }}
{{- end }}

{{/* The Secret and key the operator's DATABASE_URL comes from. */}}
{{- define "hyperspool.databaseSecretRef" -}}
{{- if include "hyperspool.makesDatabaseSecret" . -}}
name: hyperspool-db
key: url
{{- else -}}
name: {{ required "database.existingSecret (or database.url, or postgresql.enabled) is required" .Values.database.existingSecret }}
key: {{ required "database.secretKey is required" .Values.database.secretKey }}
{{- end }}
{{- end }}

{{/* The URL of the database the chart's Secret holds. */}}
{{- define "hyperspool.databaseURL" -}}
{{- if .Values.postgresql.enabled -}}
postgres://hyperspool:{{ .Values.postgresql.password }}@hyperspool-postgres.{{ .Release.Namespace }}.svc:5432/postgres
{{- else -}}
{{ .Values.database.url }}
{{- end }}
{{- end }}
