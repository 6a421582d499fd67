package dashboards

import (
	"errors"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Validate decodes a dashboard's JSON strictly with the SDK's schema:
// unknown fields, missing required ones and wrong types are errors.
func Validate(dashboardJSON []byte) error {
	var d dashboard.Dashboard //nolint:staticcheck // the classic schema on purpose: see doc.go
	err := d.UnmarshalJSONStrict(dashboardJSON)
	// The SDK returns an empty error list, not nil, for a valid dashboard.
	if err == nil || err.Error() == "" {
		return nil
	}
	return errors.Join(fmt.Errorf("the dashboard does not match Grafana's schema"), err)
}
