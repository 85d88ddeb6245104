#!/usr/bin/env bash
# Builds every container image the stacks and the container tests need, from Debian packages and
# this machine's JDK 25, for a Docker engine that reaches no image registry (an air-gapped network,
# or CI). Nothing here is tagged with an official image's name: the images get local names, and the
# compose files and tests take image names from the environment, with the official images as
# defaults for everybody who has a registry.
#
#   scripts/local-images.sh                   # builds what is missing, prints the environment to use
#   scripts/local-images.sh --env-file FILE   # ... and writes it as KEY=value lines (for
#                                             #     `docker-compose --env-file FILE`, or `set -a; . FILE`)
#   scripts/local-images.sh --force           # rebuilds everything
#   scripts/local-images.sh --names-only ...  # only prints (or writes) the variables, builds nothing
#                                             #     (CI sets them before the images exist, builds them
#                                             #     beside the first tests, and the container tests wait)
#
# What it needs on the machine: a Docker engine (DOCKER_HOST), debootstrap and a Debian mirror
# (the one apt uses, or GOSCHED_DEBIAN_MIRROR), a JDK 25 (JAVA_HOME, or Temurin 25 under /usr/lib/jvm),
# and Maven Central for the project's own image (its Dockerfile builds the jar; a mirror of it works
# through the build argument MAVEN_MIRROR). The images:
#
#   GOSCHED_BASE_IMAGE        gosched-local/debian:bookworm     debootstrap minbase + CA certificates + iproute2
#   GOSCHED_JDK_IMAGE         gosched-local/jdk:25              the base + this machine's JDK 25 (stands for eclipse-temurin:25-jdk)
#   GOSCHED_NATS_IMAGE        gosched-local/nats:bookworm       the base + Debian's nats-server (stands for nats:2.9.10)
#   GOSCHED_PROMETHEUS_IMAGE  gosched-local/prometheus:bookworm the base + Debian's prometheus (stands for prom/prometheus)
#   GOSCHED_LOADTEST_IMAGE    gosched-loadtest:local            deploy/loadtest/Dockerfile on the base (wrk)
#   GOSCHED_IMAGE             gosched:local                     the project's Dockerfile on the JDK and the base
#   TESTCONTAINERS_TINYIMAGE_CONTAINER_IMAGE                    the base, for Testcontainers' own helper (its
#                                                               default, alpine, is fetched from a registry)
#   TESTCONTAINERS_RYUK_DISABLED=true                           Ryuk's image comes from a registry too
#
# Machine-specific CA certificates (a proxy that re-signs HTTPS, as on CI) go into the base from
# GOSCHED_EXTRA_CA_DIR (default /usr/local/share/ca-certificates); the base carries a label with
# their digest and is rebuilt when they change, and so is everything built on it.
set -euo pipefail
cd "$(dirname "$0")/.."

force=false
names_only=false
env_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=true ;;
    --names-only) names_only=true ;;
    --env-file) env_file="$2"; shift ;;
    *) echo "usage: $0 [--force] [--names-only] [--env-file FILE]" >&2; exit 2 ;;
  esac
  shift
done

# Debian's docker client (20.10, with BuildKit built in) before a client-only docker elsewhere.
export PATH="/usr/bin:/usr/sbin:$PATH"

base="${GOSCHED_BASE_IMAGE:-gosched-local/debian:bookworm}"
jdk="${GOSCHED_JDK_IMAGE:-gosched-local/jdk:25}"
nats="${GOSCHED_NATS_IMAGE:-gosched-local/nats:bookworm}"
prometheus="${GOSCHED_PROMETHEUS_IMAGE:-gosched-local/prometheus:bookworm}"
loadtest="${GOSCHED_LOADTEST_IMAGE:-gosched-loadtest:local}"
app="${GOSCHED_IMAGE:-gosched:local}"
suite="${GOSCHED_DEBIAN_SUITE:-bookworm}"
ca_dir="${GOSCHED_EXTRA_CA_DIR:-/usr/local/share/ca-certificates}"

for name in "$base" "$jdk" "$nats" "$prometheus"; do
  case "$name" in
    gosched*) ;;
    *) echo "refusing to build $name: local builds get local names (gosched...), never an official image's" >&2; exit 2 ;;
  esac
done

step() { printf '== %s (%s)\n' "$1" "$(date +%T)"; }
timed() { local t0=$SECONDS; "$@"; printf '   %d s\n' "$((SECONDS - t0))" >&2; }
exists() { docker image inspect "$1" > /dev/null 2>&1; }
label() { docker image inspect -f "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

# The digest of the extra CA certificates: what the base must carry to be current.
ca_digest() {
  if [ -d "$ca_dir" ] && compgen -G "$ca_dir/*.crt" > /dev/null; then
    cat "$ca_dir"/*.crt | sha256sum | cut -c1-16
  else
    echo none
  fi
}

mirror() {
  if [ -n "${GOSCHED_DEBIAN_MIRROR:-}" ]; then echo "$GOSCHED_DEBIAN_MIRROR"; return; fi
  local m
  m="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }')"
  [ -z "$m" ] && m="$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)"
  echo "${m:-http://deb.debian.org/debian}"
}

# A root file system in the making; removed (with what debootstrap mounted in it) however the script ends.
rootfs=""
remove_rootfs() {
  [ -n "$rootfs" ] || return 0
  local m
  for m in $(awk -v r="$rootfs/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$m" || true; done
  rm -rf "$rootfs" "$rootfs.log"
  rootfs=""
}
trap remove_rootfs EXIT

build_base() {
  command -v debootstrap > /dev/null || { echo "debootstrap missing: apt-get install debootstrap" >&2; exit 2; }
  local root
  root="$(mktemp -d /var/tmp/gosched-rootfs.XXXXXX)"
  rootfs="$root"
  if ! debootstrap --variant=minbase --include=ca-certificates,iproute2 "$suite" "$root" "$(mirror)" > "$root.log" 2>&1; then
    tail -n 30 "$root.log" >&2
    rm -rf "$root" "$root.log"
    exit 1
  fi
  rm -f "$root.log"
  if [ "$(ca_digest)" != none ]; then
    cp "$ca_dir"/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates > /dev/null
  fi
  # Smaller, as Debian's own slim images: no documentation, manual pages or translations (now or
  # from packages installed later, dpkg's path-exclude), no package lists or caches (every image on
  # it runs apt-get update first and apt-get clean after).
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' \
    > "$root/etc/dpkg/dpkg.cfg.d/gosched-slim"
  find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
  tar -C "$root" -c . | docker import \
    --change "LABEL io.gosched.ca-digest=$(ca_digest)" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
    --change 'CMD ["bash"]' - "$base" > /dev/null
  remove_rootfs
}

base_id() { docker image inspect -f '{{.Id}}' "$base"; }
digest() { sha256sum | cut -c1-16; }

# An image made from a recipe (a Dockerfile and what it copies) is current when it carries the
# digest of that recipe and of the base it was built on: an edit here, a new base (new CA
# certificates) or another JDK makes it stale.
current() { exists "$1" && [ "$(label "$1" io.gosched.recipe)" = "$2" ]; }

# A Dockerfile from standard input, with no context: packages from Debian only.
build_packaged() { # name dockerfile-text
  local recipe empty
  recipe="$(printf '%s\n%s' "$2" "$(base_id)" | digest)"
  if ! $force && current "$1" "$recipe"; then return 0; fi
  step "$1"
  empty="$(mktemp -d)"
  printf '%s\n' "$2" | timed docker build -q -t "$1" --label "io.gosched.recipe=$recipe" -f - "$empty" > /dev/null
  rm -rf "$empty"
}

java_home() {
  local home="${JAVA_HOME:-}"
  if [ -z "$home" ] || ! "$home/bin/java" -version 2>&1 | grep -q '"25'; then
    home=/usr/lib/jvm/temurin-25-jdk-amd64
  fi
  "$home/bin/java" -version 2>&1 | grep -q '"25' || { echo "no JDK 25 at $home (set JAVA_HOME)" >&2; exit 2; }
  echo "$home"
}

build_jdk() {
  local home recipe ctx
  home="$(java_home)"
  recipe="$(printf '%s\n%s\n%s' "$home" "$(cat "$home/release")" "$(base_id)" | digest)"
  if ! $force && current "$jdk" "$recipe"; then return 0; fi
  step "$jdk: the JDK of $home"
  # The whole JDK, unchanged (jlink links from it and refuses a runtime image whose files were
  # changed or left out); tar -h because its cacerts may be a link into /etc, and the image needs
  # the file itself (with the extra CA in it, for Maven inside the project's build).
  ctx="$(mktemp -d)"
  printf '%s\n' "FROM $base" "COPY jdk /opt/java" \
    "ENV JAVA_HOME=/opt/java PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "LABEL io.gosched.recipe=$recipe" 'CMD ["jshell"]' > "$ctx/Dockerfile"
  tar -c -h --transform 's,^\./,jdk/,' -C "$home" . -C "$ctx" Dockerfile | timed docker build -q -t "$jdk" - > /dev/null
  rm -rf "$ctx"
}

emit_env() {
  local vars="GOSCHED_BASE_IMAGE=$base
GOSCHED_JDK_IMAGE=$jdk
GOSCHED_NATS_IMAGE=$nats
GOSCHED_PROMETHEUS_IMAGE=$prometheus
GOSCHED_LOADTEST_IMAGE=$loadtest
GOSCHED_IMAGE=$app
TESTCONTAINERS_TINYIMAGE_CONTAINER_IMAGE=$base
TESTCONTAINERS_RYUK_DISABLED=true"
  if [ -n "$env_file" ]; then
    printf '%s\n' "$vars" > "$env_file"
    echo "== environment written to $env_file"
  fi
  printf '%s\n' "$vars" | sed 's/^/export /'
}

if $names_only; then
  emit_env
  exit 0
fi
docker info > /dev/null 2>&1 || { echo "no Docker engine answers at ${DOCKER_HOST:-the default socket}" >&2; exit 2; }

t_all=$SECONDS
if $force || ! exists "$base" || [ "$(label "$base" io.gosched.ca-digest)" != "$(ca_digest)" ]; then
  step "$base: debootstrap $suite from $(mirror)"
  timed build_base
fi
build_jdk
# The official images' shapes: nats-server as the entrypoint with flags as the command; prometheus as
# the entrypoint with its config and store as the command, in /prometheus, as nobody. wget for the
# compose health checks (the official alpine-based images have it too). Prometheus without the
# 218 MB of time-zone data the package's web UI depends on: its API does not use it.
build_packaged "$nats" "FROM $base
RUN apt-get update -q && apt-get install -y -q --no-install-recommends nats-server wget > /dev/null \\
 && apt-get clean && rm -rf /var/lib/apt/lists/*
EXPOSE 4222 6222 8222
ENTRYPOINT [\"nats-server\"]"
build_packaged "$prometheus" "FROM $base
RUN apt-get update -q && apt-get install -y -q --no-install-recommends prometheus wget > /dev/null \\
 && dpkg --purge --force-depends libjs-moment-timezone > /dev/null \\
 && apt-get clean && rm -rf /var/lib/apt/lists/* \\
 && mkdir -p /prometheus && chown -R nobody:nogroup /prometheus /var/lib/prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT [\"/usr/bin/prometheus\"]
CMD [\"--config.file=/etc/prometheus/prometheus.yml\", \"--storage.tsdb.path=/prometheus\"]"
# The project's own two always go through docker build: its layer cache decides what changed.
step "$loadtest: deploy/loadtest/Dockerfile"
timed docker build -q -t "$loadtest" --build-arg "BASE_IMAGE=$base" deploy/loadtest > /dev/null
step "$app: the project's Dockerfile (Maven inside)"
timed docker build -q -t "$app" --build-arg "JDK_IMAGE=$jdk" --build-arg "BASE_IMAGE=$base" \
  ${MAVEN_MIRROR:+--build-arg "MAVEN_MIRROR=$MAVEN_MIRROR"} . > /dev/null
printf '== images ready in %d s\n' "$((SECONDS - t_all))"
docker image ls --format '   {{.Repository}}:{{.Tag}}  {{.Size}}' | grep -E "^   ($(printf '%s|' "$base" "$jdk" "$nats" "$prometheus" "$loadtest" "$app" | sed 's/|$//'))  " || true

emit_env
