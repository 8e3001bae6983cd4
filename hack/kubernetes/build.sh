#!/usr/bin/env bash
# Builds the pinned Kubernetes programs — etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl — and Helm from the Go module proxy into a cache folder named by
# everything that decides the result (go.mod, go.sum, this script, the Go version), and prints
# that folder. A folder already built is reused as it is. Its time is printed either way.
#
#   hack/kubernetes/build.sh        # prints e.g. ~/.cache/cutroom/kubernetes/3f2a…/bin
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HELM_VERSION=v4.3.1

started=$(date +%s)
kube_version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' "$here/go.mod")
[ -n "$kube_version" ] || { echo "build.sh: no k8s.io/kubernetes in $here/go.mod" >&2; exit 1; }
key=$( { cat "$here/go.mod" "$here/go.sum" "$0"; go version; } | sha256sum | cut -c1-16)
cache="${CUTROOM_CACHE:-$HOME/.cache/cutroom}/kubernetes/$kube_version-$key"
bin="$cache/bin"
programs=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl helm)

built() { local p; for p in "${programs[@]}"; do [ -x "$bin/$p" ] || return 1; done; [ -e "$cache/done" ]; }
if built; then
  echo "==> Kubernetes $kube_version programs reused from $cache ($(( $(date +%s) - started )) s)" >&2
  echo "$bin"; exit 0
fi

echo "==> building Kubernetes $kube_version, etcd and Helm $HELM_VERSION into $cache (cold, with no Go caches: about 20 minutes on 2 cores)" >&2
rm -rf "$cache"; mkdir -p "$bin"
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local

# The version every Kubernetes program reports (kubectl version, /version), stamped as its own
# release scripts do; the build date is the release's own (the proxy's time of the version), so
# two builds of one pin are alike. The proxy keeps no commit: gitCommit stays empty.
minor=${kube_version#v1.}; minor=${minor%%.*}
released=$(cd "$here" && go mod download -json "k8s.io/kubernetes@$kube_version" |
  sed -n 's/^[[:space:]]*"Info": "\(.*\)",*$/\1/p' | xargs cat | sed -n 's/.*"Time":"\([^"]*\)".*/\1/p')
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitCommit= -X $pkg.gitTreeState=clean -X $pkg.buildDate=${released:-1970-01-01T00:00:00Z}"
done

(cd "$here" && go build -trimpath -ldflags "$ldflags" -o "$bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
(cd "$here" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
# Helm 4 is an ordinary module: installed at its pinned version, outside this module.
(cd "$cache" && GOFLAGS= GOBIN="$bin" go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION")

built_in=$(( $(date +%s) - started ))
echo "$built_in" > "$cache/done"
# Earlier builds (other pins, or this script before a change) are not needed any more.
find "$(dirname "$cache")" -mindepth 1 -maxdepth 1 ! -name "$(basename "$cache")" -exec rm -rf {} +
echo "==> Kubernetes $kube_version programs built in $built_in s" >&2
echo "$bin"
