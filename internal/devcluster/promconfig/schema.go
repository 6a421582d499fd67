package promconfig

// The subset of Prometheus's configuration file that Config writes, as Go
// structs so that the file is marshalled, never templated. Field names are
// Prometheus's (https://prometheus.io/docs/prometheus/latest/configuration/configuration/).

type file struct {
	Global        global         `json:"global"`
	RuleFiles     []string       `json:"rule_files,omitempty"`
	Alerting      *alerting      `json:"alerting,omitempty"`
	ScrapeConfigs []scrapeConfig `json:"scrape_configs"`
}

// alerting names the Alertmanagers Prometheus sends its alerts to.
type alerting struct {
	Alertmanagers []alertmanagerConfig `json:"alertmanagers"`
}

type alertmanagerConfig struct {
	APIVersion    string         `json:"api_version"`
	StaticConfigs []staticConfig `json:"static_configs"`
}

type global struct {
	ScrapeInterval     string `json:"scrape_interval"`
	ScrapeTimeout      string `json:"scrape_timeout"`
	EvaluationInterval string `json:"evaluation_interval"`
}

type scrapeConfig struct {
	JobName string `json:"job_name"`
	// HonorLabels is written even when false, so that the choice made for
	// each job is visible in the file.
	HonorLabels   bool           `json:"honor_labels"`
	MetricsPath   string         `json:"metrics_path,omitempty"`
	StaticConfigs []staticConfig `json:"static_configs,omitempty"`
	FileSDConfigs []fileSDConfig `json:"file_sd_configs,omitempty"`
}

// fileSDConfig reads targets from files, which Prometheus watches.
type fileSDConfig struct {
	Files           []string `json:"files"`
	RefreshInterval string   `json:"refresh_interval"`
}

// staticConfig is a target group, as in static_configs and in the files
// of file_sd_configs.
type staticConfig struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}
