package manager

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// fakeAPF is an apiserver's answer to the list of priority levels: the
// APF header naming the caller's level (none when levelUID is empty), and
// the status and levels of the list.
type fakeAPF struct {
	levelUID string
	status   int
	levels   []flowcontrolv1.PriorityLevelConfiguration
}

func (f fakeAPF) serve(t *testing.T) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations" || r.Method != http.MethodGet {
			t.Errorf("Unexpected request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		if f.levelUID != "" {
			w.Header().Set(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID, f.levelUID)
			w.Header().Set(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, "fs-uid")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		if f.status == http.StatusOK {
			_ = json.NewEncoder(w).Encode(flowcontrolv1.PriorityLevelConfigurationList{Items: f.levels})
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

func level(name, uid string, typ flowcontrolv1.PriorityLevelEnablement) flowcontrolv1.PriorityLevelConfiguration {
	return flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)},
		Spec:       flowcontrolv1.PriorityLevelConfigurationSpec{Type: typ},
	}
}

// builtInLevels are an apiserver's exempt level and two limited ones.
var builtInLevels = []flowcontrolv1.PriorityLevelConfiguration{
	level("exempt", "uid-exempt", flowcontrolv1.PriorityLevelEnablementExempt),
	level("workload-low", "uid-low", flowcontrolv1.PriorityLevelEnablementLimited),
	level("backfill-manager", "uid-backfill", flowcontrolv1.PriorityLevelEnablementLimited),
}

// TestDecidePacing: with --kube-api-qps=0 the manager sets no client-side
// limit only where APF surely paces it; -1 is refused where nothing would,
// and goes ahead, unsure, where the manager cannot tell; a rate is used as
// given without asking the apiserver.
func TestDecidePacing(t *testing.T) {
	cases := map[string]struct {
		apf        fakeAPF
		qps        float32
		burst      int
		want       Pacing
		wantReason string
		wantErr    string
	}{
		"auto, limited level": {
			apf:        fakeAPF{levelUID: "uid-backfill", status: http.StatusOK, levels: builtInLevels},
			want:       Pacing{Mode: PacedByServer, QPS: -1},
			wantReason: `priority level "backfill-manager"`,
		},
		"auto, exempt level": {
			apf:        fakeAPF{levelUID: "uid-exempt", status: http.StatusOK, levels: builtInLevels},
			want:       Pacing{Mode: PacedByClient, QPS: 200, Burst: 400},
			wantReason: `exempts the manager's requests from API Priority and Fairness (priority level "exempt"`,
		},
		"auto, no APF": {
			apf:        fakeAPF{status: http.StatusOK, levels: builtInLevels},
			want:       Pacing{Mode: PacedByClient, QPS: 200, Burst: 400},
			wantReason: "does not apply API Priority and Fairness",
		},
		"auto, may not read the levels": {
			apf:        fakeAPF{levelUID: "uid-low", status: http.StatusForbidden},
			want:       Pacing{Mode: PacedByClient, QPS: 200, Burst: 400},
			wantReason: "may not list prioritylevelconfigurations",
		},
		"auto, flowcontrol v1 not served": {
			apf:        fakeAPF{levelUID: "uid-low", status: http.StatusNotFound},
			want:       Pacing{Mode: PacedByClient, QPS: 200, Burst: 400},
			wantReason: "answered 404",
		},
		"auto, level not listed": {
			apf:        fakeAPF{levelUID: "uid-gone", status: http.StatusOK, levels: builtInLevels},
			want:       Pacing{Mode: PacedByClient, QPS: 200, Burst: 400},
			wantReason: "no PriorityLevelConfiguration has that uid",
		},
		"no limit, limited level": {
			apf:        fakeAPF{levelUID: "uid-low", status: http.StatusOK, levels: builtInLevels},
			qps:        -1,
			want:       Pacing{Mode: PacedByServer, QPS: -1},
			wantReason: `priority level "workload-low"`,
		},
		"no limit, exempt level": {
			apf:     fakeAPF{levelUID: "uid-exempt", status: http.StatusOK, levels: builtInLevels},
			qps:     -1,
			wantErr: `--kube-api-qps=-1: the apiserver puts the manager's requests in the exempt priority level "exempt"`,
		},
		"no limit, no APF": {
			apf:     fakeAPF{status: http.StatusOK, levels: builtInLevels},
			qps:     -1,
			wantErr: "--kube-api-qps=-1: the apiserver does not apply API Priority and Fairness to the manager's requests",
		},
		"no limit, may not read the levels": {
			apf:        fakeAPF{levelUID: "uid-low", status: http.StatusForbidden},
			qps:        -1,
			want:       Pacing{Mode: PacedByServer, QPS: -1, Unsure: true},
			wantReason: "if it is, nothing paces the manager's writes",
		},
		"a rate": {
			// No server: a rate needs no request.
			qps:        50,
			burst:      100,
			want:       Pacing{Mode: PacedByClient, QPS: 50, Burst: 100},
			wantReason: "--kube-api-qps=50 --kube-api-burst=100",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := &rest.Config{Host: "http://127.0.0.1:1"}
			if tc.apf.status != 0 {
				cfg = tc.apf.serve(t)
			}
			got, err := DecidePacing(context.Background(), cfg, tc.qps, tc.burst)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("DecidePacing = %+v, %v, want an error containing %q", got, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "--kube-api-qps=200 --kube-api-burst=400") {
					t.Errorf("The refusal %q does not say how to fix it", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("Reason %q, want it to contain %q", got.Reason, tc.wantReason)
			}
			got.Reason = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecidePacing (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecidePacingUnauthorized: credentials the apiserver refuses are an
// error that says so, not a missing APF header.
func TestDecidePacingUnauthorized(t *testing.T) {
	cfg := fakeAPF{status: http.StatusUnauthorized}.serve(t)
	if _, err := DecidePacing(context.Background(), cfg, QPSAuto, FallbackBurst); err == nil || !strings.Contains(err.Error(), "does not accept the manager's credentials") {
		t.Errorf("DecidePacing = %v, want an error about the credentials", err)
	}
}
