#!/usr/bin/env bash
# End-to-end run of Cutroom on a kind cluster: upload → artifact job → media_ready.
#
# NOT RUN: it needs a container engine, which the machines this project is developed on do
# not have, so nothing in it has been executed; treat its first run as the test of the script
# itself. What it would add is the images: their builds, and the api, operator and job
# programs running inside them. The rest of its path is proven on every test run against a
# real control plane built from Kubernetes' own Go modules (hack/kubernetes/, test/kubernetes/):
# kube-apiserver with RBAC, etcd, the controller-manager (Job controller, garbage collector)
# and the scheduler; the CRDs applied with kubectl; the chart installed, upgraded and
# uninstalled with Helm 4; the operator under its chart-made ServiceAccount; the job programs
# run from their Pods' own commands by a node agent in test support (no kubelet, no images).
# It needs Docker, kind, kubectl, helm, curl and jq (ffmpeg optional: the clip is otherwise
# made with the ffmpeg job image).
#
# Usage: hack/kind-e2e.sh            (KEEP_CLUSTER=1 keeps the cluster for a look afterwards)
# Settings (environment): CLUSTER_NAME, NAMESPACE, RELEASE, API_PORT, S3_PORT, WAIT_SECONDS.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cluster=${CLUSTER_NAME:-cutroom-e2e}
namespace=${NAMESPACE:-cutroom}
release=${RELEASE:-cutroom}
api_port=${API_PORT:-18000}   # must match config.publicBaseUrl in charts/cutroom/ci/kind-values.yaml
s3_port=${S3_PORT:-19000}     # must match s3.publicEndpoint there
wait_seconds=${WAIT_SECONDS:-300}
tag=e2e
work=$(mktemp -d)
forwards=()

log() { printf '\n== %s\n' "$*" >&2; }
fail() { printf '\nFAIL: %s\n' "$*" >&2; exit 1; }

# --- tools -------------------------------------------------------------------
missing=()
for tool in docker kind kubectl helm curl jq; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "hack/kind-e2e.sh needs: docker kind kubectl helm curl jq. Missing: ${missing[*]}" >&2
  echo "(This script cannot run where no Docker engine is available.)" >&2
  exit 2
fi
docker info >/dev/null 2>&1 || { echo "The docker CLI is here but no Docker engine answers (docker info failed)." >&2; exit 2; }

# --- cleanup on any exit -----------------------------------------------------
dump_state() {
  log "state for diagnosis"
  kubectl -n "$namespace" get pods,jobs,analysisjobs,renderjobs,artifactjobs -o wide 2>/dev/null || true
  kubectl -n "$namespace" logs "deploy/$release-api" --all-containers --tail=200 2>/dev/null || true
  kubectl -n "$namespace" logs -l app.kubernetes.io/component=operator --tail=200 --prefix 2>/dev/null || true
  kubectl -n "$namespace" logs -l job-name --tail=100 --prefix 2>/dev/null || true
}
cleanup() {
  local status=$?
  [ $status -ne 0 ] && dump_state
  for pid in "${forwards[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
  if [ "${KEEP_CLUSTER:-0}" = 1 ]; then
    echo "Keeping kind cluster $cluster (kind delete cluster --name $cluster)." >&2
  else
    kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
  fi
  if [ $status -eq 0 ]; then echo "PASS"; else echo "FAIL"; fi
  exit $status
}
trap cleanup EXIT

# --- cluster and images --------------------------------------------------------
log "kind cluster $cluster"
kind get clusters 2>/dev/null | grep -qx "$cluster" || kind create cluster --name "$cluster" --wait 120s
kubectl config use-context "kind-$cluster" >/dev/null

log "images"
docker build -f "$repo/api/Dockerfile" -t "cutroom/api:$tag" "$repo"
docker build -f "$repo/operator/Dockerfile" -t "cutroom/operator:$tag" "$repo"
# Assumes job-images/ffmpeg/Dockerfile builds from the repository root like the others.
docker build -f "$repo/job-images/ffmpeg/Dockerfile" -t "cutroom/job-ffmpeg:$tag" "$repo"
for image in api operator job-ffmpeg; do
  kind load docker-image --name "$cluster" "cutroom/$image:$tag"
done

# --- backing services: single-pod PostgreSQL, Redis and MinIO, no persistence ----
log "PostgreSQL, Redis, MinIO"
kubectl create namespace "$namespace" --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$namespace" apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: { name: postgres }
spec:
  selector: { matchLabels: { app: postgres } }
  template:
    metadata: { labels: { app: postgres } }
    spec:
      containers:
        - name: postgres
          image: postgres:17-bookworm
          env:
            - { name: POSTGRES_USER, value: cutroom }
            - { name: POSTGRES_PASSWORD, value: cutroom }
            - { name: POSTGRES_DB, value: cutroom }
          ports: [{ containerPort: 5432 }]
          readinessProbe:
            exec: { command: ["pg_isready", "-U", "cutroom", "-d", "cutroom"] }
            periodSeconds: 2
---
apiVersion: v1
kind: Service
metadata: { name: postgres }
spec:
  selector: { app: postgres }
  ports: [{ port: 5432 }]
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: redis }
spec:
  selector: { matchLabels: { app: redis } }
  template:
    metadata: { labels: { app: redis } }
    spec:
      containers:
        - name: redis
          image: redis:7.4-bookworm
          args: ["--save", "", "--appendonly", "no"]
          ports: [{ containerPort: 6379 }]
          readinessProbe:
            exec: { command: ["redis-cli", "ping"] }
            periodSeconds: 2
---
apiVersion: v1
kind: Service
metadata: { name: redis }
spec:
  selector: { app: redis }
  ports: [{ port: 6379 }]
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: minio }
spec:
  selector: { matchLabels: { app: minio } }
  template:
    metadata: { labels: { app: minio } }
    spec:
      containers:
        - name: minio
          image: quay.io/minio/minio:RELEASE.2025-04-22T22-12-26Z
          args: ["server", "/data"]
          env:
            - { name: MINIO_ROOT_USER, value: cutroom }
            - { name: MINIO_ROOT_PASSWORD, value: cutroom-e2e-secret }
          ports: [{ containerPort: 9000 }]
          readinessProbe:
            httpGet: { path: /minio/health/ready, port: 9000 }
            periodSeconds: 2
          volumeMounts: [{ name: data, mountPath: /data }]
      volumes: [{ name: data, emptyDir: {} }]
---
apiVersion: v1
kind: Service
metadata: { name: minio }
spec:
  selector: { app: minio }
  ports: [{ port: 9000 }]
---
apiVersion: batch/v1
kind: Job
metadata: { name: minio-bucket }
spec:
  backoffLimit: 20
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: mc
          image: quay.io/minio/mc:RELEASE.2025-04-16T18-13-26Z
          command: ["/bin/sh", "-c"]
          args:
            - mc alias set e2e http://minio:9000 cutroom cutroom-e2e-secret && mc mb --ignore-existing e2e/cutroom-media
YAML
for service in postgres redis minio; do
  kubectl -n "$namespace" rollout status "deploy/$service" --timeout=300s
done
kubectl -n "$namespace" wait --for=condition=complete job/minio-bucket --timeout=300s

# --- the chart -------------------------------------------------------------------
log "helm install $release"
helm upgrade --install "$release" "$repo/charts/cutroom" \
  --namespace "$namespace" \
  -f "$repo/charts/cutroom/ci/kind-values.yaml" \
  --wait --timeout 10m
kubectl get crd analysisjobs.cutroom.dev renderjobs.cutroom.dev artifactjobs.cutroom.dev >/dev/null

# --- port-forwards ---------------------------------------------------------------
forward() { # service local-port remote-port
  kubectl -n "$namespace" port-forward "svc/$1" "$2:$3" >"$work/forward-$1.log" 2>&1 &
  forwards+=($!)
}
forward "$release-api" "$api_port" 80
forward minio "$s3_port" 9000
api="http://127.0.0.1:$api_port"
for _ in $(seq 1 60); do curl -fsS "$api/readyz" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "$api/readyz" >/dev/null || fail "api not ready through the port-forward"

# --- upload → artifact job → media_ready ------------------------------------------
jar="$work/cookies"
call() { # method path [json-body] → prints the body, fails on a non-2xx status
  local method=$1 path=$2 body=${3:-}
  local args=(-sS -o "$work/body" -w '%{http_code}' -b "$jar" -c "$jar" -X "$method" "$api$path")
  [ -n "${csrf:-}" ] && args+=(-H "X-CSRF-Token: $csrf")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
  local status
  status=$(curl "${args[@]}")
  case "$status" in 2??) cat "$work/body" ;; *) echo "$method $path → $status: $(cat "$work/body")" >&2; return 1 ;; esac
}

suffix=$(date +%s)
email="e2e-$suffix@cutroom.test"
username="e2e$suffix"
password="E2e-password-$suffix!"

log "sign up $email"
call POST /api/v1/users/ "$(jq -nc --arg e "$email" --arg u "$username" --arg p "$password" '{name:"E2E", username:$u, email:$e, password:$p}')" >/dev/null

# Without SMTP_URL the api writes each mail to its log; this expects the recipient and
# the link's signed token (a JWT) on the same log line.
log "verification token from the api log (no SMTP: mails are logged)"
token=""
for _ in $(seq 1 30); do
  token=$(kubectl -n "$namespace" logs "deploy/$release-api" -c api --since=10m 2>/dev/null \
    | grep -F "$email" | grep -oE 'eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+' | tail -n 1 || true)
  [ -n "$token" ] && break
  sleep 1
done
[ -n "$token" ] || fail "no verification token for $email in the api log"
call POST /api/v1/auth/verify-email "$(jq -nc --arg t "$token" '{token:$t}')" >/dev/null

log "log in"
status=$(curl -sS -o "$work/login" -w '%{http_code}' -b "$jar" -c "$jar" -X POST "$api/api/v1/auth/login" \
  --data-urlencode "username=$username" --data-urlencode "password=$password")
[ "$status" = 200 ] || fail "login → $status: $(cat "$work/login")"
csrf=$(jq -r '.csrf_token' "$work/login")

log "project"
project=$(call POST /api/v1/projects/ '{"name":"kind e2e"}' | jq -r '.uuid')

log "clip"
clip="$work/clip.mp4"
make_clip=(-hide_banner -loglevel error -f lavfi -i testsrc2=size=320x240:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000
  -t 3 -c:v libx264 -pix_fmt yuv420p -c:a aac -shortest -movflags +faststart)
if command -v ffmpeg >/dev/null 2>&1; then
  ffmpeg "${make_clip[@]}" -y "$clip"
else
  docker run --rm --user "$(id -u):$(id -g)" -v "$work:/out" --entrypoint ffmpeg "cutroom/job-ffmpeg:$tag" "${make_clip[@]}" -y /out/clip.mp4
fi
size=$(wc -c <"$clip" | tr -d ' ')

log "presign, PUT, confirm ($size bytes)"
presign=$(call POST /api/v1/media/presign "$(jq -nc --arg p "$project" --argjson s "$size" \
  '{filename:"clip.mp4", content_type:"video/mp4", size_bytes:$s, scope:"project", scope_project_id:$p}')")
file_id=$(jq -r '.media_file_id' <<<"$presign")
item_id=$(jq -r '.media_item_id' <<<"$presign")
upload_url=$(jq -r '.upload_url' <<<"$presign")
curl -fsS -X PUT -H 'Content-Type: video/mp4' --data-binary "@$clip" "$upload_url" >/dev/null || fail "PUT to the presigned URL"
call POST "/api/v1/media/$file_id/confirm" >/dev/null

log "waiting for media $item_id to be uploaded (artifact job)"
media_status=""
deadline=$((SECONDS + wait_seconds))
while [ $SECONDS -lt $deadline ]; do
  media_status=$(call GET "/api/v1/media/$item_id" | jq -r '.status')
  case "$media_status" in uploaded | failed) break ;; esac
  sleep 3
done
kubectl -n "$namespace" get artifactjobs
[ "$media_status" = uploaded ] || fail "media status is '$media_status' after ${wait_seconds}s"
