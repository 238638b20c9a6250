# Swapgate's image, for operators with Docker:
#
#   docker build -t swapgate:latest .
#
# make image builds the same image without Docker, as an OCI archive
# (internal/ociimage; its test holds this file to it): a static binary
# (CGO_ENABLED=0) at /swapgate, the entrypoint; CA certificates for the
# live upstreams and webhooks; the nonroot user (65532), which the
# Kubernetes manifests run as; no shell.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/swapgate ./cmd/swapgate

# distroless static: CA certificates, /etc/passwd with nonroot, no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/swapgate /swapgate
USER 65532:65532
WORKDIR /home/nonroot
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
ENTRYPOINT ["/swapgate"]
CMD ["serve"]
