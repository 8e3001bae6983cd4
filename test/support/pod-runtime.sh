#!/usr/bin/env bash
# The container runtime of test/support/kube-node.ts: runs one container's command in a mount
# namespace of its own (unshare --mount), with what a kubelet would mount there — a fresh /dev
# with the usual devices and the termination-message file, the ServiceAccount token under
# /var/run/secrets/kubernetes.io/serviceaccount, each emptyDir at its mountPath — and as the
# pod's user and group. The image's files are this machine's: the command runs in the folder
# the agent chose, with the environment it was given.
#
#   pod-runtime.sh POD_DIR UID GID TERMINATION_PATH IMAGE_DIR -- COMMAND [ARGS…]
# POD_DIR holds serviceaccount/ (optional), termination-log, and mounts: lines "SOURCE TARGET",
# SOURCE relative to POD_DIR. IMAGE_DIR (the repository, standing for the image's files) stays
# at its path even where a volume covers a folder above it (a checkout under /tmp, say).
set -euo pipefail
pod=$1 uid=$2 gid=$3 termination=$4 image=$5
shift 6

# The pod's folder stays reachable at one place while other mounts (over /tmp, say) hide its own.
mount -t tmpfs -o mode=755 tmpfs /run
mkdir /run/.pod /run/.image
mount --bind "$pod" /run/.pod
mount --bind "$image" /run/.image
pod=/run/.pod

# /dev: a tmpfs with the host's device nodes bound in, as a runtime builds one.
mkdir /run/.hostdev
mount --bind /dev /run/.hostdev
mount -t tmpfs -o mode=755 tmpfs /dev
for node in null zero full random urandom tty; do
  touch "/dev/$node"
  mount --bind "/run/.hostdev/$node" "/dev/$node"
done
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mkdir /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
umount /run/.hostdev
rmdir /run/.hostdev

mkdir -p "$(dirname "$termination")"
touch "$termination"
mount --bind "$pod/termination-log" "$termination"

if [ -d "$pod/serviceaccount" ]; then
  mkdir -p /run/secrets/kubernetes.io/serviceaccount
  mount --bind -o ro "$pod/serviceaccount" /run/secrets/kubernetes.io/serviceaccount
fi

while read -r source target; do
  [ -n "$source" ] || continue
  mount --bind "$pod/$source" "$target"
done < "$pod/mounts"

if [ ! -e "$image/package.json" ]; then
  mkdir -p "$image"
  mount --bind /run/.image "$image"
fi
umount -l /run/.pod /run/.image
rmdir /run/.pod /run/.image
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"
