# backfill's build. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
export CGO_ENABLED ?= 0

BIN := $(CURDIR)/bin
K8S_VERSION := v1.37.2
K8S_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=37 \
	-X k8s.io/client-go/pkg/version.gitVersion=$(K8S_VERSION)
K8S_BINS := $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kube-scheduler $(BIN)/kubectl
CONTROL_PLANE := $(K8S_BINS) $(BIN)/etcd
# The oldest Kubernetes backfill supports (docs/install.md): the CRD and
# operator suites also run against its apiserver and controller-manager.
K8S_OLDEST_VERSION := v1.30.14
K8S_OLDEST_BIN := $(BIN)/kubernetes-$(K8S_OLDEST_VERSION)
K8S_OLDEST_BINS := $(K8S_OLDEST_BIN)/kube-apiserver $(K8S_OLDEST_BIN)/kube-controller-manager
DEV_TOOLS := $(BIN)/controller-gen $(BIN)/golangci-lint
PROM_VERSION := 3.16.0
OBS_TOOLS := $(BIN)/prometheus $(BIN)/promtool
ALERTMANAGER_VERSION := 0.35.0
ALERT_TOOLS := $(BIN)/alertmanager $(BIN)/amtool
SIM_TOOLS := $(BIN)/kwok $(BIN)/metrics-server
KUEUE_VERSION := v0.19.2
# Kueue's CRDs and webhook manifests come from its module, next to the
# binary, so that bin/ alone runs it.
QUEUE_TOOLS := $(BIN)/kueue
METRICS_SERVER_VERSION := v0.8.0
KEDA_VERSION := v2.20.2
# KEDA's operator and its metrics apiserver (the adapter), for the keda
# suite; its CRDs come from its module, next to the binaries.
KEDA_TOOLS := $(BIN)/keda-operator $(BIN)/keda-adapter
HELM_VERSION := v3.22.0
# helm reports its version and renders for the Kubernetes its client-go
# speaks (1.37), as its own release build does.
HELM_LDFLAGS := -s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37 \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37
CHART_TOOLS := $(BIN)/helm

# The release version has one source: the chart's appVersion, which is also
# the chart's default image tag. Builds stamp it, the commit and whether the
# tree had changes into internal/version (internal/version's tests prove
# VERSION equal to the chart's).
VERSION := $(shell sed -nE 's/^appVersion: *"?([^"]*)"?[[:space:]]*$$/\1/p' charts/backfill/Chart.yaml)
COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
TREE_MODIFIED := $(shell test -z "$$(git status --porcelain 2>/dev/null)" && echo false || echo true)
# The commit's time dates the image, so that one commit builds one image.
COMMIT_TIME := $(shell git log -1 --format=%cI 2>/dev/null)
VERSION_PKG := github.com/backfill-dev/backfill/internal/version
VERSION_LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) -X $(VERSION_PKG).modified=$(TREE_MODIFIED)

.PHONY: help
help: ## List the targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

##@ Tools: each is built from its pinned Go module under hack/tools into bin/,
## only when missing or when its pins changed.

.PHONY: tools
tools: $(DEV_TOOLS) $(CONTROL_PLANE) $(K8S_OLDEST_BINS) $(SIM_TOOLS) $(QUEUE_TOOLS) $(KEDA_TOOLS) $(OBS_TOOLS) $(ALERT_TOOLS) $(CHART_TOOLS) ## Build every tool into bin/.

.PHONY: control-plane
control-plane: $(CONTROL_PLANE)
	@true

$(K8S_BINS) &: hack/tools/kubernetes/go.mod hack/tools/kubernetes/go.sum
	@echo ">> building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $(K8S_VERSION) from source"
	@echo "   (the first build takes about 10 minutes and 2.5 GB of memory; later runs take seconds)"
	cd hack/tools/kubernetes && go build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $(BIN)/ \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
	@touch $(K8S_BINS)

$(K8S_OLDEST_BINS) &: hack/tools/kubernetes-oldest/go.mod hack/tools/kubernetes-oldest/go.sum
	@echo ">> building kube-apiserver, kube-controller-manager $(K8S_OLDEST_VERSION) from source (about 8 minutes the first time)"
	cd hack/tools/kubernetes-oldest && go build -trimpath -o $(K8S_OLDEST_BIN)/ \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$(K8S_OLDEST_VERSION) \
		-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=30" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
	@touch $(K8S_OLDEST_BINS)

$(BIN)/etcd: hack/tools/etcd/go.mod hack/tools/etcd/go.sum hack/tools/etcd/main.go
	@echo ">> building etcd (about 1 minute the first time)"
	cd hack/tools/etcd && go build -trimpath -ldflags "-s -w" -o $@ .

$(BIN)/kwok: hack/tools/kwok/go.mod hack/tools/kwok/go.sum
	@echo ">> building kwok (about 2 minutes the first time)"
	cd hack/tools/kwok && go build -trimpath -ldflags "-s -w" -o $@ sigs.k8s.io/kwok/cmd/kwok

# metrics-server reports its version through client-go's version package,
# as its own release build sets it.
$(BIN)/metrics-server: hack/tools/metrics-server/go.mod hack/tools/metrics-server/go.sum
	@echo ">> building metrics-server $(METRICS_SERVER_VERSION) from source (about 4 minutes the first time)"
	cd hack/tools/metrics-server && go build -trimpath \
		-ldflags "-s -w -X k8s.io/client-go/pkg/version.gitVersion=$(METRICS_SERVER_VERSION)" \
		-o $@ sigs.k8s.io/metrics-server/cmd/metrics-server

# Kueue reports its version as its own release build sets it.
$(BIN)/kueue: hack/tools/kueue/go.mod hack/tools/kueue/go.sum
	@echo ">> building kueue $(KUEUE_VERSION) from source (about 5 minutes the first time)"
	cd hack/tools/kueue && go build -trimpath \
		-ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$(KUEUE_VERSION)" \
		-o $@ sigs.k8s.io/kueue/cmd/kueue
	rm -rf $(BIN)/kueue-manifests && mkdir -p $(BIN)/kueue-manifests/crd
	cd hack/tools/kueue && src=$$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue) && \
		cp $$src/config/components/crd/bases/*.yaml $(BIN)/kueue-manifests/crd/ && \
		cp $$src/config/components/webhook/manifests.yaml $(BIN)/kueue-manifests/webhooks.yaml
	chmod -R u+w $(BIN)/kueue-manifests

# KEDA reports its version as its own release build sets it. One build per
# binary, for its name; the second reuses what the first compiled.
#
# The adapter serves its own Prometheus metrics on ":<--port>", every
# interface, with no flag for the address (cmd/adapter/main.go, its only
# file). It is built from a copy of that file, patched here to listen on
# 127.0.0.1 and laid through go build -overlay into a directory of the
# tools module (hack/tools/keda/adapter) that exists only in the overlay:
# Go refuses overlays of files in the module cache. KEDA's packages still
# come from the module cache. The build stops if the pattern no longer
# matches exactly once (as after a KEDA upgrade).
KEDA_BUILD := $(BIN)/.keda-build
KEDA_ADAPTER_LISTEN := fmt.Sprintf(":%v", metricsAPIServerPort)
$(KEDA_TOOLS) &: hack/tools/keda/go.mod hack/tools/keda/go.sum
	@echo ">> building keda-operator and keda-adapter $(KEDA_VERSION) from source (the first time 7 minutes on an idle machine, 15 or more on a busy one)"
	rm -rf $(KEDA_BUILD) && mkdir -p $(KEDA_BUILD)
	set -e; cd hack/tools/keda; go mod download github.com/kedacore/keda/v2; \
	main="$$(go list -m -f '{{.Dir}}' github.com/kedacore/keda/v2)/cmd/adapter/main.go"; \
	n=$$(grep -cF '$(KEDA_ADAPTER_LISTEN)' "$$main" || true); \
	if [ "$$n" != 1 ]; then \
		echo "error: $$main holds the adapter's metrics listen address $$n times, not once:" >&2; \
		echo '  $(KEDA_ADAPTER_LISTEN)' >&2; \
		echo "  make KEDA_ADAPTER_LISTEN and the sed below in the Makefile match it, to bind 127.0.0.1" >&2; \
		exit 1; \
	fi; \
	sed 's/fmt\.Sprintf(":%v", metricsAPIServerPort)/fmt.Sprintf("127.0.0.1:%v", metricsAPIServerPort)/' \
		"$$main" > $(KEDA_BUILD)/adapter-main.go; \
	grep -qF 'fmt.Sprintf("127.0.0.1:%v", metricsAPIServerPort)' $(KEDA_BUILD)/adapter-main.go || \
		{ echo "error: the sed in the Makefile no longer patches $$main to bind 127.0.0.1" >&2; exit 1; }; \
	test ! -e adapter || { echo "error: hack/tools/keda/adapter exists; the adapter's overlay needs the name" >&2; exit 1; }; \
	printf '{"Replace":{"%s":"%s"}}\n' "$$PWD/adapter/main.go" $(KEDA_BUILD)/adapter-main.go > $(KEDA_BUILD)/overlay.json; \
	ldflags="-s -w -X github.com/kedacore/keda/v2/version.Version=$(KEDA_VERSION)"; \
	go build -trimpath -ldflags "$$ldflags" -o $(BIN)/keda-operator github.com/kedacore/keda/v2/cmd/operator; \
	go build -trimpath -ldflags "$$ldflags" -overlay=$(KEDA_BUILD)/overlay.json \
		-o $(BIN)/keda-adapter ./adapter
	rm -rf $(KEDA_BUILD)
	rm -rf $(BIN)/keda-manifests && mkdir -p $(BIN)/keda-manifests/crd
	cd hack/tools/keda && src=$$(go list -m -f '{{.Dir}}' github.com/kedacore/keda/v2) && \
		cp $$src/config/crd/bases/*.yaml $(BIN)/keda-manifests/crd/
	chmod -R u+w $(BIN)/keda-manifests
	@touch $(KEDA_TOOLS)

$(OBS_TOOLS) &: hack/tools/prometheus/go.mod hack/tools/prometheus/go.sum
	@echo ">> building prometheus and promtool $(PROM_VERSION) from source"
	@echo "   (the first build takes several minutes and about 3.5 GB of memory; later runs take seconds)"
	cd hack/tools/prometheus && CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$(PROM_VERSION)" -o $(BIN)/ \
		github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool
	@touch $(OBS_TOOLS)

# Alertmanager embeds its web UI's assets, which npm builds and the Go
# module lacks: it is built from a copy of the module with a placeholder
# page in their place (hack/tools/alertmanager/ui-placeholder.html),
# through a go.mod that replaces the module with that copy. The API works.
# The module is downloaded first: go list names no directory for a module
# missing from the cache.
ALERT_BUILD := $(BIN)/.alertmanager-build
$(ALERT_TOOLS) &: hack/tools/alertmanager/go.mod hack/tools/alertmanager/go.sum hack/tools/alertmanager/ui-placeholder.html
	@echo ">> building alertmanager and amtool $(ALERTMANAGER_VERSION) from source (about 5 minutes the first time)"
	rm -rf $(ALERT_BUILD) && mkdir -p $(ALERT_BUILD)
	cd hack/tools/alertmanager && go mod download github.com/prometheus/alertmanager && \
		src=$$(go list -m -f '{{.Dir}}' github.com/prometheus/alertmanager) && test -n "$$src" && \
		cp -R "$$src" $(ALERT_BUILD)/alertmanager && \
		chmod -R u+w $(ALERT_BUILD)/alertmanager && \
		for ui in elm mantine; do mkdir -p $(ALERT_BUILD)/alertmanager/ui/app/dist/$$ui && \
			cp ui-placeholder.html $(ALERT_BUILD)/alertmanager/ui/app/dist/$$ui/index.html; done && \
		cp go.mod go.sum $(ALERT_BUILD)/ && \
		go mod edit -modfile=$(ALERT_BUILD)/go.mod -replace github.com/prometheus/alertmanager=$(ALERT_BUILD)/alertmanager && \
		CGO_ENABLED=0 go build -modfile=$(ALERT_BUILD)/go.mod -trimpath \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$(ALERTMANAGER_VERSION)" -o $(BIN)/ \
		github.com/prometheus/alertmanager/cmd/alertmanager github.com/prometheus/alertmanager/cmd/amtool
	rm -rf $(ALERT_BUILD)
	@touch $(ALERT_TOOLS)

$(BIN)/helm: hack/tools/helm/go.mod hack/tools/helm/go.sum
	@echo ">> building helm $(HELM_VERSION) from source (about 2 minutes the first time)"
	cd hack/tools/helm && go build -trimpath -ldflags "$(HELM_LDFLAGS)" -o $@ helm.sh/helm/v3/cmd/helm

$(BIN)/controller-gen: hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && go build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(BIN)/golangci-lint: hack/tools/golangci-lint/go.mod hack/tools/golangci-lint/go.sum
	@echo ">> building golangci-lint (a few minutes the first time)"
	cd hack/tools/golangci-lint && go build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

##@ Development

.PHONY: generate
generate: $(BIN)/controller-gen $(BIN)/kubectl ## Regenerate deepcopy, the CRD (also the chart's copy) and the manager's RBAC.
	$(BIN)/controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(BIN)/controller-gen paths=./api/... crd:maxDescLen=0,generateEmbeddedObjectMeta=true output:crd:artifacts:config=config/crd/bases
	$(BIN)/kubectl kustomize config/crd > deploy/crds/kubeflow.org_tfjobs.yaml
	go run ./hack/genrules
	cp deploy/crds/kubeflow.org_tfjobs.yaml charts/backfill/crds/kubeflow.org_tfjobs.yaml
	$(BIN)/controller-gen rbac:roleName=backfill-manager paths=./internal/manager/... output:rbac:artifacts:config=config/rbac
	go run ./hack/gendashboards

.PHONY: verify
verify: generate ## Prove generated files current, code formatted and vetted.
	@git diff --exit-code -- api config deploy charts || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "run gofmt -w"; exit 1; }
	go vet ./...
	go vet -tags integration,e2e ./test/...

.PHONY: lint
lint: $(BIN)/golangci-lint ## Run the linters of .golangci.yaml.
	$(BIN)/golangci-lint run ./...

.PHONY: build
build: ## Build bin/backfill.
	go build -ldflags "$(VERSION_LDFLAGS)" -o $(BIN)/backfill ./cmd/backfill

# The image's platform: this machine's architecture unless IMAGE_ARCH=arm64
# or the like.
IMAGE_ARCH ?= $(shell go env GOARCH)
IMAGE_DIR ?= $(BIN)/image
# The Dockerfile's build passes the same flags (test/integration/image).
IMAGE_LDFLAGS := -s -w $(VERSION_LDFLAGS)

.PHONY: image
image: ## Build the container image from scratch, with no daemon: bin/image/backfill.tar (docker-archive) and bin/image/oci (OCI layout).
	@mkdir -p $(IMAGE_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -trimpath -ldflags "$(IMAGE_LDFLAGS)" \
		-o $(IMAGE_DIR)/backfill-linux-$(IMAGE_ARCH) ./cmd/backfill
	cd hack/tools/image && go run . -binary $(IMAGE_DIR)/backfill-linux-$(IMAGE_ARCH) -arch $(IMAGE_ARCH) \
		-version $(VERSION) -revision "$(COMMIT)" -created "$(COMMIT_TIME)" -out $(IMAGE_DIR)

# Where `make install` puts backfill: BINDIR, else PREFIX/bin, else go
# install's own choice ($GOBIN, else $GOPATH/bin).
PREFIX ?=
BINDIR ?= $(if $(PREFIX),$(PREFIX)/bin,$(or $(shell go env GOBIN),$(shell go env GOPATH)/bin))

.PHONY: install
install: build ## Install backfill and the kubectl plugin kubectl-backfill into BINDIR (PREFIX=/usr/local or BINDIR=... to choose).
	install -d "$(BINDIR)"
	install -m 0755 $(BIN)/backfill "$(BINDIR)/backfill"
	ln -sf backfill "$(BINDIR)/kubectl-backfill"
	@echo "installed $(BINDIR)/backfill and $(BINDIR)/kubectl-backfill; with $(BINDIR) on PATH, 'kubectl backfill' works"

.PHONY: unit
unit: ## Unit tests only: fast, no binaries needed.
	go test ./...

.PHONY: integration
integration: $(CONTROL_PLANE) $(SIM_TOOLS) $(QUEUE_TOOLS) $(KEDA_TOOLS) $(OBS_TOOLS) $(ALERT_TOOLS) $(CHART_TOOLS) ## Suites against a real kube-apiserver and etcd.
	go test -tags integration -count=1 ./test/integration/... ./internal/devcluster/ ./test/bench/

# The suites whose contract is the Kubernetes API itself: the CRD's
# validation, the operator, and the chart's objects accepted by the
# apiserver (its admission policies enforced). Everything else runs on
# 1.37 only.
.PHONY: integration-oldest
integration-oldest: $(CONTROL_PLANE) $(K8S_OLDEST_BINS) $(CHART_TOOLS) ## The CRD, operator and install suites against the oldest Kubernetes backfill supports.
	BACKFILL_KUBERNETES_BIN=$(K8S_OLDEST_BIN) go test -tags integration -count=1 ./test/integration/ ./test/integration/tfjob/
	BACKFILL_KUBERNETES_BIN=$(K8S_OLDEST_BIN) go test -tags integration -count=1 ./test/integration/install/ \
		-run 'TestServerSideDryRun|TestDryRunSeesPodSecurityViolations|TestAdmissionPolicyReservesTrainingPods'

.PHONY: test
test: unit integration integration-oldest e2e ## Every test (builds the missing tools first).

.PHONY: queue-tools
queue-tools: $(QUEUE_TOOLS) ## Build Kueue, which the suites and `backfill dev --kueue` run.

.PHONY: keda-tools
keda-tools: $(KEDA_TOOLS) ## Build KEDA's operator and metrics apiserver, which the keda suite runs.

.PHONY: dev-tools
dev-tools: $(CONTROL_PLANE) $(SIM_TOOLS) $(OBS_TOOLS) $(ALERT_TOOLS) $(KEDA_TOOLS) ## Build what `backfill dev` runs (KEDA scales its GPU inference).

.PHONY: dev
dev: dev-tools ## Start the local cluster with the demo (backfill dev up).
	go run ./cmd/backfill dev up

.PHONY: e2e
e2e: dev-tools $(QUEUE_TOOLS) $(CHART_TOOLS) ## Suites against the whole local cluster (backfill dev).
	go test -tags e2e -count=1 -timeout 45m ./test/e2e/...

##@ Benchmarks: not part of `make test`.

BENCH_FLAGS ?=

.PHONY: bench
bench: $(CONTROL_PLANE) $(SIM_TOOLS) build ## Time the manager on 200 TFJobs against a local apiserver (BENCH_FLAGS="-memory", "-scale", "-catch-up" or "-reclaim-scale" for the other runs).
	go run ./test/bench $(BENCH_FLAGS)

.PHONY: pod-shape
pod-shape: ## Print what the kubelet's own code makes of a TFJob pod's shapes: QoS, CPU weight and quota, memory limit, OOM score.
	cd hack/tools/kubernetes && go run ./podshape

.PHONY: bench-reclaim
bench-reclaim: ## Simulate 100 nodes for 7 days, 3 load profiles x 3 seeds, sweeping Koordinator's and backfill's knobs: utilisation vs hot nodes, online latency and work lost (~9 min on 2 CPUs); plots and tables in a temporary directory unless BENCH_FLAGS="-out DIR"; "-update-docs-images" rewrites docs/images.
	go run ./test/bench/reclaim $(BENCH_FLAGS)

.PHONY: bench-tidal
bench-tidal: ## Simulate 64 inference GPUs for 14 days (a KEDA cron day, scale-ups up to 30 min early, unplanned spikes) x 3 seeds: training on the idle GPUs under priority preemption, Katalyst-style reactive eviction and backfill's GPU loans (internal/tide) (~30 s on 2 CPUs); table and targets printed, JSON and CSV in a temporary directory unless BENCH_FLAGS="-out DIR".
	go run ./test/bench/tidal $(BENCH_FLAGS)

.PHONY: bench-interference
bench-interference: ## As root, on this machine's real cgroups: online P99 alone, beside BestEffort training, under the node agent and on cores of its own, at 35% and 65% load, steady and in bursts, in 8 shuffled rounds with intervals (~70 min on 2 CPUs); plot and JSON in $TMPDIR or /tmp unless BENCH_FLAGS="-out <png>".
	go run ./test/bench/interference $(BENCH_FLAGS)
