package gpuloan

import (
	"errors"
	"fmt"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
)

// Settings are the GPU loans' knobs; the manager's --gpu-loan-* flags set
// them.
type Settings struct {
	// Tide are the decisions' own knobs: the lead, the default checkpoint
	// time, the notice's margin and slack, and the shortest loan.
	Tide tide.Settings
	// Interval is the time between two decisions.
	Interval time.Duration
	// DefaultWarmUp is an online workload's warm-up (pod creation to
	// Ready) unless its backfill.dev/gpu-warm-up annotation states one.
	DefaultWarmUp time.Duration
	// Horizon is how far ahead the forecast looks: long enough to see the
	// next night's loan from the morning.
	Horizon time.Duration
	// History shapes a forecast from a workload's past replicas in
	// Prometheus; HistoryRefresh is how often it is read again.
	History        tide.HistorySettings
	HistoryRefresh time.Duration
}

// DefaultSettings are a decision every 30 s, 10 minutes of checkpoint until a
// job's handshakes measure it, 3 minutes of warm-up, a forecast of 36
// hours, a week of history read again every hour.
func DefaultSettings() Settings {
	return Settings{
		Tide:           tide.DefaultSettings(),
		Interval:       30 * time.Second,
		DefaultWarmUp:  3 * time.Minute,
		Horizon:        36 * time.Hour,
		History:        tide.DefaultHistorySettings(),
		HistoryRefresh: time.Hour,
	}
}

// The flags that set Settings, for the errors of Validate.
const (
	FlagInterval       = "gpu-loan-interval"
	FlagCheckpointTime = "gpu-loan-checkpoint-time"
	FlagWarmUp         = "gpu-loan-warm-up"
	FlagLead           = "gpu-loan-lead"
	FlagMinLoan        = "gpu-loan-min-loan"
)

// Validate says which setting is wrong, by the manager flag that sets it.
func (s Settings) Validate() error {
	var errs []error
	if s.Interval < time.Second {
		errs = append(errs, fmt.Errorf("--%s=%v: must be at least 1s, e.g. 30s", FlagInterval, s.Interval))
	}
	if s.Tide.DefaultCheckpointTime <= 0 {
		errs = append(errs, fmt.Errorf("--%s=%v: must be positive: how long a job's checkpoint takes until its own handshakes measure it, e.g. 10m", FlagCheckpointTime, s.Tide.DefaultCheckpointTime))
	}
	if s.DefaultWarmUp < 0 {
		errs = append(errs, fmt.Errorf("--%s=%v: must not be negative: the time from an online pod's creation to Ready, e.g. 3m", FlagWarmUp, s.DefaultWarmUp))
	}
	if s.Tide.Lead < 0 {
		errs = append(errs, fmt.Errorf("--%s=%v: must not be negative: how early GPUs come back before the forecast needs them, e.g. 30m", FlagLead, s.Tide.Lead))
	}
	if s.Tide.MinLoan < 0 {
		errs = append(errs, fmt.Errorf("--%s=%v: must not be negative: the shortest loan a job starts or resumes on, e.g. 15m", FlagMinLoan, s.Tide.MinLoan))
	}
	if len(errs) == 0 {
		if err := s.Tide.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.Horizon < 24*time.Hour {
		errs = append(errs, fmt.Errorf("forecast horizon %v: must be at least 24h, to see a day's schedule whole", s.Horizon))
	}
	if s.HistoryRefresh <= 0 {
		errs = append(errs, fmt.Errorf("history refresh %v: must be positive, e.g. 1h", s.HistoryRefresh))
	}
	return errors.Join(errs...)
}
