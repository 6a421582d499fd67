package manager

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/internal/progress"
	"github.com/backfill-dev/backfill/internal/report"
)

// setupReports adds the progress report endpoint, when
// --report-bind-address turns it on, and returns the store of its reports
// and what pods need to reach it. It runs on the leader only (see
// report.Server): the leader's controller is the one that reads the store.
func setupReports(mgr ctrl.Manager, opts Options) (*progress.Store, *tfjob.ReportAccess, error) {
	if opts.ReportAddress == "" {
		return nil, nil, nil
	}
	access, err := reportAccess(opts)
	if errors.Is(err, fs.ErrNotExist) {
		// The Secret is mounted optional: the manager runs without it, and
		// says what is missing.
		ctrl.Log.WithName("manager").Error(err, "Progress reports are off until the manager restarts with the certificate: create the Secret mounted at --report-cert-dir (the Helm chart makes one; docs/install.md)")
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	store := progress.NewStore()
	authn := report.NewTokenReviewer(mgr.GetClient(), tfjob.ReportAudience, opts.ReportReviewLimits, clock.RealClock{})
	handler := report.NewHandler(authn, report.CachedObjects(mgr.GetClient()), store, clock.RealClock{}, ctrl.Log.WithName("report"))
	if err := mgr.Add(report.NewServer(opts.ReportAddress, opts.ReportCertDir, handler)); err != nil {
		return nil, nil, err
	}
	if pod, ok := ownPod(); ok {
		label := report.NewLeaderPodLabel(mgr.GetClient(), pod, ctrl.Log.WithName("report"))
		if err := label.Clear(context.Background()); err != nil {
			return nil, nil, err
		}
		if err := mgr.Add(label); err != nil {
			return nil, nil, err
		}
	}
	ctrl.Log.WithName("manager").Info("The leader serves progress reports", "address", opts.ReportAddress, "url", access.BaseURL)
	return store, access, nil
}

// ownPod is the manager's pod, from the downward API's POD_NAME and
// POD_NAMESPACE; none outside a pod.
func ownPod() (types.NamespacedName, bool) {
	pod := types.NamespacedName{Namespace: os.Getenv("POD_NAMESPACE"), Name: os.Getenv("POD_NAME")}
	return pod, pod.Name != "" && pod.Namespace != ""
}

// reportAccess is what training pods need to reach the endpoint: its URL
// and the CA of --report-cert-dir, read once (a new CA needs a restart).
func reportAccess(opts Options) (*tfjob.ReportAccess, error) {
	caFile := filepath.Join(opts.ReportCertDir, report.CAFile)
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("reading the report endpoint's CA (--report-cert-dir must hold %s, %s and %s): %w", report.CertFile, report.KeyFile, report.CAFile, err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no PEM certificate: training pods could not verify the report endpoint with it", caFile)
	}
	return &tfjob.ReportAccess{BaseURL: strings.TrimSuffix(opts.ReportURL, "/"), CA: ca}, nil
}
