package promconfig

// The subset of Prometheus's configuration file that Config writes, as Go
// structs so that the file is marshalled, never templated. Field names are
// Prometheus's (https://prometheus.io/docs/prometheus/latest/configuration/configuration/).

type file struct {
	Global        global         `json:"global"`
	ScrapeConfigs []scrapeConfig `json:"scrape_configs"`
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
	StaticConfigs []staticConfig `json:"static_configs"`
}

type staticConfig struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}
