# backfill's image, for those who build with Docker. `make image` builds the
# same image with no daemon; test/integration/image proves the two equal.
# From the repository's root:
#
#   docker build -t registry.example.com/platform/backfill:0.1.0 \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(git log -1 --format=%cI) .

# The release version: charts/backfill/Chart.yaml's appVersion, which is
# also the chart's default image tag.
ARG VERSION=0.1.0
# The git commit and its time, for `backfill version` and the labels.
ARG COMMIT
ARG CREATED
ARG MODIFIED=false

# The Go of go.mod.
FROM golang:1.26.7 AS build
ARG VERSION
ARG COMMIT
ARG MODIFIED
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux GOARCH=${TARGETARCH} go build -trimpath \
      -ldflags "-s -w -X github.com/backfill-dev/backfill/internal/version.version=${VERSION} -X github.com/backfill-dev/backfill/internal/version.commit=${COMMIT} -X github.com/backfill-dev/backfill/internal/version.modified=${MODIFIED}" \
      -o /out/backfill ./cmd/backfill

# Nothing but the static binary: no shell, no package manager, nothing
# written at run time, so it runs on a read-only root filesystem.
FROM scratch
ARG VERSION
ARG COMMIT
ARG CREATED
COPY --from=build --chown=65532:65532 --chmod=0555 /out/backfill /usr/local/bin/backfill
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Numeric, so that Kubernetes can check runAsNonRoot without /etc/passwd.
USER 65532:65532
WORKDIR /
LABEL org.opencontainers.image.title="backfill" \
      org.opencontainers.image.description="TFJob operator that runs TensorFlow training in the idle capacity of online Kubernetes clusters" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.source="https://github.com/backfill-dev/backfill" \
      org.opencontainers.image.created="${CREATED}"
ENTRYPOINT ["/usr/local/bin/backfill"]
