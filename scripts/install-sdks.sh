#!/usr/bin/env bash
# Install/build everything the real-SDK compatibility programs in tests/sdk/
# need, and write .cache/sdk/manifest.json (how to run each program).
#
#   scripts/install-sdks.sh [lang ...]     lang: go java node python ruby rust php
#                                          sourcemaps (default: all)
#
# Idempotent and incremental: each program has a stamp (hash of its sources,
# lock files and toolchain version) under .cache/sdk/stamps/, and is rebuilt
# only when the stamp changes or its artifact is missing.
#
# Caches: build output under .cache/sdk/ (override with TRACEBOX_SDK_CACHE);
# downloads in the tools' standard user caches (~/go/pkg/mod, ~/.cargo,
# ~/.m2, ~/.npm, ~/.cache/pip), which the usual variables relocate
# (GOMODCACHE, GOCACHE, CARGO_HOME, npm_config_cache, PIP_CACHE_DIR) plus
# MAVEN_REPO_LOCAL for Maven's local repository.
#
# Needs: go, cargo, java+mvn, node+npm, python3 on PATH; apt-get (as root, or
# via sudo) for Debian's ruby-sentry-ruby, php-cli and php-curl.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SDK_DIR="$ROOT/tests/sdk"
CACHE="${TRACEBOX_SDK_CACHE:-$ROOT/.cache/sdk}"
STAMPS="$CACHE/stamps"
PYTHON="${PYTHON:-python3}"
ALL_LANGS=(go java node python ruby rust php sourcemaps)

mkdir -p "$CACHE" "$STAMPS" "$CACHE/bin"

log() { printf 'install-sdks: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# hash of files (paths relative to ROOT) + extra strings
stamp_of() {
  local extra="$1"; shift
  {
    printf '%s\n' "$extra"
    local f
    for f in "$@"; do
      printf '%s\n' "$f"
      sha256sum < "$f"
    done
  } | sha256sum | cut -d' ' -f1
}
stamp_ok() { [[ -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]; }
stamp_set() { printf '%s' "$2" > "$STAMPS/$1"; }

# ---------------------------------------------------------------- apt
APT_UPDATED=0
apt_install() {
  local missing=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "need root (or sudo) to apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  log "apt-get install ${missing[*]}"
  if [[ $APT_UPDATED -eq 0 ]]; then
    "${sudo[@]}" apt-get update -q >/dev/null
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# ---------------------------------------------------------------- go
install_go() {
  command -v go >/dev/null || die "go not found"
  local gover dir ver id files
  gover="$(go version)"
  for dir in "$SDK_DIR"/go/v*/; do
    dir="${dir%/}"
    ver="${dir##*/v}"
    id="go-$ver"
    mapfile -t files < <(cd "$ROOT" && find "tests/sdk/go/v$ver" -maxdepth 1 -type f \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' \) | sort)
    local st
    st="$(cd "$ROOT" && stamp_of "$gover" "${files[@]}")"
    if stamp_ok "$id" "$st" && [[ -x "$CACHE/bin/$id" ]]; then
      continue
    fi
    log "go: building $id"
    (cd "$dir" && go build -mod=readonly -buildvcs=false -o "$CACHE/bin/$id" .)
    stamp_set "$id" "$st"
  done
}

# ---------------------------------------------------------------- java
install_java() {
  command -v mvn >/dev/null || die "mvn not found"
  command -v java >/dev/null || die "java not found"
  local jver dir ver id files st mvn_args=(-B -q -Dstyle.color=never)
  jver="$(java -version 2>&1 | sed -n 1p) $(mvn -v 2>/dev/null | sed -n 1p)"
  if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then
    mvn_args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
  fi
  for dir in "$SDK_DIR"/java/*/; do
    dir="${dir%/}"
    ver="${dir##*/}"
    id="java-$ver"
    mapfile -t files < <(cd "$ROOT" && find "tests/sdk/java/$ver" -type f \( -name '*.java' -o -name 'pom.xml' \) | sort)
    st="$(cd "$ROOT" && stamp_of "$jver" "${files[@]}")"
    if stamp_ok "$id" "$st" && [[ -f "$CACHE/$id/classes/tracebox/SdkTest.class" ]] \
        && compgen -G "$CACHE/$id/lib/sentry-*.jar" >/dev/null; then
      continue
    fi
    log "java: building $id"
    rm -rf "$CACHE/$id"
    # offline first (fast when ~/.m2 already has everything), online otherwise
    if ! (cd "$dir" && mvn "${mvn_args[@]}" "-Dout.dir=$CACHE/$id" -o compile >/dev/null 2>&1); then
      if ! (cd "$dir" && mvn "${mvn_args[@]}" "-Dout.dir=$CACHE/$id" compile) > "$CACHE/$id.mvn.log" 2>&1; then
        cat "$CACHE/$id.mvn.log" >&2
        die "maven build of $id failed"
      fi
    fi
    stamp_set "$id" "$st"
  done
}

# ---------------------------------------------------------------- node
install_node() {
  command -v npm >/dev/null || die "npm not found"
  local nver dir ver id st dest
  nver="$(node --version) npm $(npm --version 2>/dev/null)"
  for dir in "$SDK_DIR"/node/*/; do
    dir="${dir%/}"
    ver="${dir##*/}"
    id="node-$ver"
    dest="$CACHE/$id"
    st="$(cd "$ROOT" && stamp_of "$nver" "tests/sdk/node/$ver/package.json" "tests/sdk/node/$ver/package-lock.json")"
    if stamp_ok "$id" "$st" && [[ -f "$dest/node_modules/@sentry/node/package.json" ]]; then
      continue
    fi
    log "node: npm ci for $id"
    mkdir -p "$dest"
    cp "$dir/package.json" "$dir/package-lock.json" "$dest/"
    (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    stamp_set "$id" "$st"
  done
}

# ---------------------------------------------------------------- sourcemaps
# The source maps test app (tests/sourcemaps/app): esbuild, @sentry/browser and
# sentry-cli, whose Linux binary is the npm package @sentry/cli-linux-x64 (an optional
# dependency of @sentry/cli). --ignore-scripts: no install script may download anything.
install_sourcemaps() {
  command -v npm >/dev/null || die "npm not found"
  local dir="$ROOT/tests/sourcemaps/app" dest="$CACHE/sourcemaps-app" id="sourcemaps-app" st
  st="$(cd "$ROOT" && stamp_of "$(node --version) npm $(npm --version 2>/dev/null)" \
    tests/sourcemaps/app/package.json tests/sourcemaps/app/package-lock.json)"
  if stamp_ok "$id" "$st" && [[ -x "$dest/node_modules/@sentry/cli-linux-x64/bin/sentry-cli" ]] \
      && [[ -f "$dest/node_modules/@sentry/browser/package.json" ]]; then
    return 0
  fi
  log "sourcemaps: npm ci for $id"
  mkdir -p "$dest"
  cp "$dir/package.json" "$dir/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  [[ -x "$dest/node_modules/@sentry/cli-linux-x64/bin/sentry-cli" ]] \
    || die "sentry-cli's binary package @sentry/cli-linux-x64 was not installed"
  stamp_set "$id" "$st"
}

# ---------------------------------------------------------------- python
install_python() {
  command -v "$PYTHON" >/dev/null || die "$PYTHON not found"
  local pyver dir ver id st venv
  pyver="$("$PYTHON" -c 'import sys; print(sys.version)')"
  for dir in "$SDK_DIR"/python/*/; do
    dir="${dir%/}"
    ver="${dir##*/}"
    id="python-$ver"
    venv="$CACHE/$id"
    st="$(cd "$ROOT" && stamp_of "$pyver" "tests/sdk/python/$ver/requirements.txt")"
    if stamp_ok "$id" "$st" && [[ -x "$venv/bin/python" ]]; then
      continue
    fi
    log "python: creating venv $id"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$dir/requirements.txt"
    stamp_set "$id" "$st"
  done
}

# ---------------------------------------------------------------- ruby
install_ruby() {
  # Debian packages ruby-sentry-ruby without a dependency on the interpreter
  apt_install ruby ruby-sentry-ruby
  ruby -e 'require "sentry-ruby"; exit(Sentry::VERSION == "5.3.0" ? 0 : 1)' \
    || die "ruby-sentry-ruby is not version 5.3.0 ($(ruby -e 'require "sentry-ruby"; print Sentry::VERSION' 2>&1))"
}

# ---------------------------------------------------------------- rust
install_rust() {
  command -v cargo >/dev/null || die "cargo not found"
  local dir
  export CARGO_TARGET_DIR="$CACHE/rust-target"
  for dir in "$SDK_DIR"/rust/*/; do
    dir="${dir%/}"
    # cargo's own freshness check is fast; --locked keeps Cargo.lock authoritative
    (cd "$dir" && cargo build --locked --quiet)
  done
}

# ---------------------------------------------------------------- php
install_php() {
  apt_install php-cli php-curl
  php -r 'exit(function_exists("curl_init") && function_exists("gzcompress") ? 0 : 1);' \
    || die "php is missing the curl or zlib extension"
}

# ---------------------------------------------------------------- manifest
write_manifest() {
  "$PYTHON" - "$ROOT" "$CACHE" "$SDK_DIR/programs.json" <<'PY'
import json, os, sys, time
root, cache, src = sys.argv[1:4]
data = json.load(open(src))
def sub(s):
    return s.replace("{root}", root).replace("{cache}", cache)
out = []
for p in data["programs"]:
    q = dict(p)
    q["cmd"] = [sub(c) for c in p["cmd"]]
    q["env"] = {k: sub(v) for k, v in p.get("env", {}).items()}
    q["cwd"] = root
    q["artifact"] = sub(p["artifact"])
    q["installed"] = os.path.exists(q["artifact"])
    out.append(q)
manifest = {
    "generated_by": "scripts/install-sdks.sh",
    "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "root": root,
    "cache": cache,
    "stdout_protocol": "each event: a 'kind=exception|message' line then 'event_id=<32hex>'; 'kind=session' per session sent",
    "env": {
        "SENTRY_DSN": "required",
        "TRACEBOX_RELEASE": "default sdk-test@1.0.0",
        "TRACEBOX_ENV": "default test",
        "TRACEBOX_REPEAT": "default 1; 2 sends the exception twice from the same code path",
        "TRACEBOX_SDK_DEBUG": "optional; SDK debug output on stderr",
    },
    "programs": out,
}
tmp = os.path.join(cache, "manifest.json.tmp")
with open(tmp, "w") as f:
    json.dump(manifest, f, indent=2)
    f.write("\n")
os.replace(tmp, os.path.join(cache, "manifest.json"))
PY
}

# ---------------------------------------------------------------- main
langs=("$@")
[[ ${#langs[@]} -eq 0 ]] && langs=("${ALL_LANGS[@]}")
for lang in "${langs[@]}"; do
  case " ${ALL_LANGS[*]} " in
    *" $lang "*) ;;
    *) die "unknown language '$lang' (known: ${ALL_LANGS[*]})" ;;
  esac
done

total_start="$(now)"
for lang in "${langs[@]}"; do
  t0="$(now)"
  "install_$lang"
  log "$lang ok ($(elapsed "$t0") s)"
done
write_manifest
log "manifest: $CACHE/manifest.json; total $(elapsed "$total_start") s"
