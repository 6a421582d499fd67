package rules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// essentialAlerts is the essential profile as docs/alerting.md's table
// states it; a change to either must change both.
var essentialAlerts = []string{
	"BackfillTFJobGPUIdle", "BackfillTFJobFailed",
	"BackfillReclaimUsageStale",
	"BackfillOnlinePodsWaitForCPU", "BackfillNodeAgentMissing",
	"BackfillOnlineObjectiveMissed",
	"BackfillGPULoanMissedReturn",
}

func TestEveryAlertHasAProfile(t *testing.T) {
	for _, g := range Groups() {
		for _, a := range g.Alerts {
			switch a.Profile {
			case ProfileEssential, ProfileFull:
			default:
				t.Errorf("%s: profile %q is not essential or full", a.Name, a.Profile)
			}
		}
	}
}

func TestInProfile(t *testing.T) {
	if diff := cmp.Diff(essentialAlerts, AlertNames(InProfile(Groups(), ProfileEssential))); diff != "" {
		t.Errorf("essential alerts (-docs +defined):\n%s", diff)
	}
	if diff := cmp.Diff(AlertNames(Groups()), AlertNames(InProfile(Groups(), ProfileFull))); diff != "" {
		t.Errorf("the full profile is not every alert (-all +full):\n%s", diff)
	}
	// backfill-colocation holds only full alerts: the essential profile
	// drops the group rather than render it empty.
	for _, g := range InProfile(Groups(), ProfileEssential) {
		if len(g.Alerts) == 0 || g.Name == "backfill-colocation" {
			t.Errorf("essential profile: group %s with %d alerts", g.Name, len(g.Alerts))
		}
	}
}

// Only the alerts that report online services harmed page.
func TestCriticalAlerts(t *testing.T) {
	var critical []string
	for _, g := range Groups() {
		for _, a := range g.Alerts {
			if a.Severity == SeverityCritical {
				critical = append(critical, a.Name)
				if a.Profile != ProfileEssential {
					t.Errorf("%s: critical but only in the full profile", a.Name)
				}
			}
		}
	}
	if diff := cmp.Diff([]string{"BackfillOnlineObjectiveMissed"}, critical); diff != "" {
		t.Errorf("critical alerts (-want +got):\n%s", diff)
	}
}
