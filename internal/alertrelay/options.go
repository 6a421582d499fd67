package alertrelay

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Options are the flags of `backfill alert-relay`.
type Options struct {
	// Listen is the address of the relay's HTTP server.
	Listen             string
	DingTalkURLFile    string
	DingTalkSecretFile string
	WeComURLFile       string
	// Timeout bounds each request to a robot.
	Timeout   time.Duration
	LogLevel  string
	LogFormat string
}

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{Listen: ":8080", Timeout: 10 * time.Second, LogLevel: "info", LogFormat: "json"}
}

// Validate checks the flags and reads the robots' files once, so that a
// missing Secret stops the relay at start rather than at the first alert.
func (o Options) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen=%q: want host:port or :port, e.g. :8080", o.Listen))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout=%s: must be positive, e.g. 10s", o.Timeout))
	}
	if o.LogFormat != "json" && o.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("--log-format=%q: must be json or text", o.LogFormat))
	}
	if o.DingTalkURLFile == "" && o.WeComURLFile == "" {
		errs = append(errs, errors.New("no robot is configured: give --dingtalk-url-file, --wecom-url-file or both"))
	}
	if o.DingTalkSecretFile != "" && o.DingTalkURLFile == "" {
		errs = append(errs, errors.New("--dingtalk-secret-file without --dingtalk-url-file: the secret signs requests to a DingTalk robot; give its URL file too"))
	}
	for _, r := range o.Robots(nil) {
		if err := r.Check(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Robots are the robots the flags configure, sending with client.
func (o Options) Robots(client *http.Client) []Robot {
	var robots []Robot
	if o.DingTalkURLFile != "" {
		robots = append(robots, &DingTalk{URLFile: o.DingTalkURLFile, SecretFile: o.DingTalkSecretFile, Client: client, Now: time.Now})
	}
	if o.WeComURLFile != "" {
		robots = append(robots, &WeCom{URLFile: o.WeComURLFile, Client: client})
	}
	return robots
}
