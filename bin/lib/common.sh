# shellcheck shell=bash
# Shared helpers for bin/dev, bin/demo and the other scripts. Source it; do not execute it.
#
#   ROOT                  absolute path of the repository root
#   step/info/warn/die    progress and error output (all on stderr except step/info)
#   as_root CMD...        run CMD as root (directly when root, else through sudo)
#   have CMD              true when CMD is on PATH
#   rel PATH              PATH relative to ROOT (for messages)

if [[ -z "${ROOT:-}" ]]; then
  ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
fi
export ROOT

# Colour only when talking to a terminal and not told otherwise.
if [[ -t 1 && -z "${NO_COLOR:-}" && "${CI:-}" != "true" ]]; then
  _c_bold=$'\033[1m' _c_warn=$'\033[33m' _c_err=$'\033[31m' _c_off=$'\033[0m'
else
  _c_bold='' _c_warn='' _c_err='' _c_off=''
fi

# Each step says how far into the script it starts, so a slow CI run shows where its time went.
step() { printf '%s==> %s%s [%dm%02ds]\n' "$_c_bold" "$*" "$_c_off" $((SECONDS / 60)) $((SECONDS % 60)); }
info() { printf '    %s\n' "$*"; }
warn() { printf '%s!!  %s%s\n' "$_c_warn" "$*" "$_c_off" >&2; }
die()  { printf '%sxx  %s%s\n' "$_c_err" "$*" "$_c_off" >&2; exit 1; }

have() { command -v "$1" >/dev/null 2>&1; }

rel() { echo "${1#"$ROOT"/}"; }

as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif have sudo; then
    sudo "$@"
  else
    die "need root for: $* (not root and no sudo)"
  fi
}

# The JVM options locally run services get (bin/dev up, bench/run): without a heap bound a JVM grows
# into a quarter of the machine's memory under load. The serial collector: a small heap needs no
# concurrent collector, and G1's own structures and threads cost resident memory (measured on the
# api under POST load, with the class-data-sharing archive: 343 MB peak with G1 and 256 MB of heap,
# 271 MB with these; throughput the same within the noise; bench/ANALYSIS.md). Glibc keeps what the
# JIT's compiler threads malloc'd and freed: TrimNativeHeapInterval hands it back once a second.
SERVICE_JVM_OPTS=(-Xmx128m -XX:+UseSerialGC -XX:TrimNativeHeapInterval=1000)
# The api's heap also starts small and grows as its load needs (its live set is under 30 MB; with
# the heap committed at 128 MB from the start, eden alone held about 25 MB more under POST load).
# It pays more young collections, about 1 % of its CPU; the worker, whose goal is its CPU, does not.
API_JVM_OPTS=("${SERVICE_JVM_OPTS[@]}" -Xms32m)
