package amconfig

// The subset of Alertmanager's configuration file that Config writes, as Go
// structs so that the file is marshalled, never templated. Field names are
// Alertmanager's (https://prometheus.io/docs/alerting/latest/configuration/).

type file struct {
	Route     route      `json:"route"`
	Receivers []receiver `json:"receivers"`
}

type route struct {
	Receiver       string   `json:"receiver"`
	GroupBy        []string `json:"group_by"`
	GroupWait      string   `json:"group_wait"`
	GroupInterval  string   `json:"group_interval"`
	RepeatInterval string   `json:"repeat_interval"`
}

type receiver struct {
	Name           string          `json:"name"`
	WebhookConfigs []webhookConfig `json:"webhook_configs"`
}

type webhookConfig struct {
	URL          string `json:"url"`
	SendResolved bool   `json:"send_resolved"`
}
