package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/backfill-dev/backfill/internal/alertrelay"
	"github.com/backfill-dev/backfill/internal/manager"
)

func newAlertRelayCommand() *cobra.Command {
	o := alertrelay.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "alert-relay",
		Short: "Forward Alertmanager's notifications to DingTalk and WeCom robots",
		Long: `Serve Alertmanager's webhook and forward each notification, as one
markdown message, to a DingTalk custom robot (POST /dingtalk) or a WeCom
group robot (POST /wecom). A route whose robot is not configured answers
404. The relay answers 200 once the robot accepted the message, 5xx when
the robot refused it or could not be reached (Alertmanager retries), and
400 for a payload it cannot read.

The robots' webhook URLs, and DingTalk's signing secret ("加签", SEC…),
are read from files, as a Kubernetes Secret volume provides them, on
every notification: a rotated Secret takes effect without a restart.
They never appear in logs or replies. URLs must be https; http is
allowed only to 127.0.0.1, ::1 or localhost, for tests.

GET /metrics serves backfill_alert_relay_notifications_total{robot,result},
GET /healthz the liveness. See docs/observability.md.

An Alertmanager receiver for it:

  receivers:
    - name: backfill-dingtalk
      webhook_configs:
        - url: http://backfill-alert-relay.monitoring:8080/dingtalk
          send_resolved: true
          max_alerts: 20`,
		Example: `  backfill alert-relay --dingtalk-url-file /etc/alert-relay/dingtalk/url \
    --dingtalk-secret-file /etc/alert-relay/dingtalk-sign/secret
  backfill alert-relay --wecom-url-file /etc/alert-relay/wecom/url --listen :8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, levelErr := manager.LogLevel(o.LogLevel)
			if err := errors.Join(o.Validate(), levelErr); err != nil {
				return usageError{err}
			}
			return alertrelay.Run(cmd.Context(), o, nil, manager.NewLogger(o.LogLevel, o.LogFormat))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", o.Listen, "Address of the relay's HTTP server: the robots' routes, /healthz and /metrics.")
	f.StringVar(&o.DingTalkURLFile, "dingtalk-url-file", "", "File holding the DingTalk robot's webhook URL, with its access_token; enables POST /dingtalk.")
	f.StringVar(&o.DingTalkSecretFile, "dingtalk-secret-file", "", "File holding the DingTalk robot's signing secret (SEC…), when its security setting is signing.")
	f.StringVar(&o.WeComURLFile, "wecom-url-file", "", "File holding the WeCom group robot's webhook URL, with its key; enables POST /wecom.")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "Time a robot has to answer one message.")
	f.StringVar(&o.LogLevel, "log-level", o.LogLevel, "Log verbosity: error, info, debug, or a number (higher is more verbose).")
	f.StringVar(&o.LogFormat, "log-format", o.LogFormat, "Log format: json or text.")
	return cmd
}
