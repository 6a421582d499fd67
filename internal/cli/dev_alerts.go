package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/backfill-dev/backfill/internal/devcluster"
	"github.com/backfill-dev/backfill/internal/devcluster/alertsink"
)

// devAlertsShown is how many of the newest notifications the table shows;
// -o json shows them all.
const devAlertsShown = 20

// devAlerts is what `dev alerts` reports: the alerts Alertmanager holds
// as firing now, and every notification the webhook sink received.
type devAlerts struct {
	Alertmanager  string                   `json:"alertmanagerURL"`
	SinkFile      string                   `json:"sinkFile"`
	Firing        []devcluster.ActiveAlert `json:"firing"`
	Notifications []alertsink.Notification `json:"notifications"`
}

func newDevAlertsCommand() *cobra.Command {
	dir := devcluster.DefaultOptions().StateDir
	var output string
	cmd := &cobra.Command{
		Use:   "alerts",
		Short: "Show the alerts firing in the local cluster's Alertmanager and the notifications its webhook sink received",
		Long: `Show what backfill's alerting rules fired in the local cluster: the alerts
its Alertmanager holds as firing now (neither silenced nor inhibited), and
the notifications Alertmanager delivered to the local webhook sink, firing
and resolved, newest last.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, outputTable, outputJSON); err != nil {
				return err
			}
			state, err := runningDevState(dir)
			if err != nil {
				return err
			}
			report, err := collectDevAlerts(cmd, state)
			if err != nil {
				return err
			}
			if output == outputJSON {
				return printDevAlertsJSON(cmd.OutOrStdout(), report)
			}
			printDevAlerts(cmd.OutOrStdout(), report, time.Now())
			return nil
		},
	}
	addStateDirFlag(cmd, &dir)
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}

// runningDevState is the state of the local cluster running from dir, or
// an error that says how to start one.
func runningDevState(dir string) (*devcluster.State, error) {
	s, err := devcluster.ReadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no local cluster runs from %s: start one with `backfill dev up`", dir)
	}
	if err != nil {
		return nil, err
	}
	if !s.Running() {
		return nil, fmt.Errorf("the local cluster of %s is not running (its dev up, pid %d, exited): `backfill dev down`, then `backfill dev up`", dir, s.PID)
	}
	if s.Alertmanager == "" {
		return nil, fmt.Errorf("the local cluster of %s runs no Alertmanager yet (it is still starting, or an older backfill started it): wait for `backfill dev status` to say ready, or restart it with `backfill dev down` and `backfill dev up`", dir)
	}
	return s, nil
}

func collectDevAlerts(cmd *cobra.Command, s *devcluster.State) (devAlerts, error) {
	firing, err := devcluster.ActiveAlerts(cmd.Context(), s.Alertmanager)
	if err != nil {
		return devAlerts{}, err
	}
	notifications, err := alertsink.Read(s.AlertSinkFile)
	if err != nil {
		return devAlerts{}, err
	}
	return devAlerts{Alertmanager: s.Alertmanager, SinkFile: s.AlertSinkFile, Firing: firing, Notifications: notifications}, nil
}

// printDevAlerts writes the report as two tables, ages counted at now.
func printDevAlerts(out io.Writer, r devAlerts, now time.Time) {
	fmt.Fprintf(out, "Firing in Alertmanager (%s): %d\n", r.Alertmanager, len(r.Firing))
	if len(r.Firing) > 0 {
		tw := newTable(out)
		fmt.Fprintln(tw, "ALERT\tSEVERITY\tNAMESPACE\tTFJOB\tNODE\tSINCE")
		for _, a := range r.Firing {
			l := a.Labels
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name(), orNone(l["severity"]), orNone(l["namespace"]),
				orNone(l["tfjob"]), orNone(l["node"]), age(metav1.NewTime(a.StartsAt), now))
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(out, "\nDelivered to the webhook sink (%s): %d notifications\n", r.SinkFile, len(r.Notifications))
	shown := r.Notifications
	if len(shown) > devAlertsShown {
		fmt.Fprintf(out, "(the newest %d; -o json shows all)\n", devAlertsShown)
		shown = shown[len(shown)-devAlertsShown:]
	}
	if len(shown) == 0 {
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "RECEIVED\tRECEIVER\tSTATUS\tALERTS\tNAMES")
	for _, n := range shown {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", n.ReceivedAt.Local().Format(time.TimeOnly), n.Receiver, n.Status,
			len(n.Alerts), strings.Join(n.AlertNames(), ","))
	}
	_ = tw.Flush()
}

func printDevAlertsJSON(out io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", data)
	return err
}
