#!/usr/bin/env bash
# Regenerates pgo/heureka.profdata, the profile every release build reads (pgo/README.md).
#
#   pgo/train.sh            # about 12 minutes on two cores: an instrumented build, then a minute of load
#
# 1. Builds heureka instrumented (-Cprofile-generate) in target/pgo-generate, apart from
#    target/release.
# 2. Runs two of them as peers on 127.0.0.1, the second with persistence on, and drives them
#    with the benchmark's own wrk scripts (bench/wrk/) in about the mix a fleet sends:
#    registrations, mostly heartbeats (which each node also replicates to the other),
#    re-registrations, full and delta fetches in JSON and XML, gzipped and plain, status
#    overrides, cancels, and a restart of the second, which restores from disk. Most of the load
#    goes to the first, set up as Heureka runs by default (persistence off): the branches it
#    takes are the ones the profile makes fast.
# 3. Stops them with SIGTERM (the counts are written at exit) and merges what the two servers
#    wrote with rustup's llvm-profdata, keeping only the functions that ran (--sparse): one that
#    never ran is compiled as without a profile, not as cold.
#
# Needs wrk and curl, and rustup's llvm-tools component (installed here if missing).
# PGO_INSTANCES (default 10000) and PGO_PORTS (default "18761 18762") change the set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${PGO_INSTANCES:-10000}
napps=$((n / 10))
read -r port_a port_b <<<"${PGO_PORTS:-18761 18762}"
work=$root/target/pgo-generate/train
wrk_dir=$root/bench/wrk

for tool in wrk curl; do
    command -v "$tool" >/dev/null || { echo "pgo/train.sh: $tool is needed" >&2; exit 2; }
done
rustup component add llvm-tools >/dev/null 2>&1 || true
profdata="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
[ -x "$profdata" ] || { echo "pgo/train.sh: no llvm-profdata at $profdata (rustup component add llvm-tools)" >&2; exit 2; }

echo "==> instrumented build (target/pgo-generate)"
rm -rf "$work"
mkdir -p "$work/build" "$work/run" "$work/store"
# The build's own build scripts write counts too; they go to build/, which is not merged.
RUSTFLAGS="-Cprofile-generate=$work/build" CARGO_TARGET_DIR=$root/target/pgo-generate \
    cargo build --release --locked --quiet -p heureka
bin=$root/target/pgo-generate/release/heureka

pids=()
stop() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT

start() { # port peer_port extra-flags...
    local port=$1 peer=$2
    shift 2
    LLVM_PROFILE_FILE="$work/run/heureka-%p.profraw" "$bin" \
        --server.port="$port" --server.address=127.0.0.1 --eureka.instance.hostname=127.0.0.1 \
        --eureka.client.service-url.defaultZone="http://127.0.0.1:$peer/eureka/,http://127.0.0.1:$port/eureka/" \
        --eureka.client.register-with-eureka=false --eureka.server.enable-self-preservation=false \
        --eureka.server.wait-time-in-ms-when-sync-empty=0 "$@" >"$work/node-$port.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do
        # Alive as well as answering: a server already on the port would answer for it.
        kill -0 "${pids[-1]}" 2>/dev/null || break
        curl -fs -o /dev/null "http://127.0.0.1:$port/eureka/apps" && return 0
        sleep 0.2
    done
    echo "pgo/train.sh: the node on $port did not start (log: $work/node-$port.log)" >&2
    exit 1
}

load() { # seconds connections script port path args...
    local seconds=$1 connections=$2 script=$3 port=$4 path=$5
    shift 5
    wrk -t2 -c"$connections" -d"${seconds}s" -s "$wrk_dir/$script" "http://127.0.0.1:$port$path" -- "$@" \
        | sed -n -e 's/^ *\([0-9]* requests in .*\),.*/    \1/p' -e 's/^ *\(Non-2xx.*\)/    \1/p'
}

echo "==> two peers on $port_a and $port_b (persistence on)"
start "$port_a" "$port_b"
start "$port_b" "$port_a" --heureka.persistence.dir="$work/store"

echo "==> $n registrations, then heartbeats, re-registrations, new registrations"
# load.lua's threads each say @@LOADED when their range is in; wrk would wait out -d.
wrk -t2 -c2 -d120s -s "$wrk_dir/load.lua" "http://127.0.0.1:$port_a" -- "$n" "$napps" 2 204 90 \
    >"$work/load.out" &
loader=$!
for _ in $(seq 1200); do
    [ "$(grep -c '^@@LOADED' "$work/load.out")" -ge 2 ] && break
    sleep 0.1
done
kill -INT "$loader" 2>/dev/null || true
wait "$loader" || true
grep '^@@LOADED' "$work/load.out" | sed 's/^/    /'
load 10 64 heartbeat.lua "$port_a" "" "$n" "$napps" 2
load 4 64 heartbeat.lua "$port_b" "" "$n" "$napps" 2
load 4 64 register.lua "$port_a" "" "$napps" train "$n" 90
load 1 8 register.lua "$port_b" "" "$napps" train

echo "==> fetches: full and delta, JSON and XML, gzip and plain"
for port in "$port_a" "$port_b"; do
    for format in json xml; do
        for encoding in gzip plain; do
            load 1 4 fetch.lua "$port" /eureka/apps "$format" "$encoding"
            load 1 4 fetch.lua "$port" /eureka/apps/delta "$format" "$encoding"
        done
    done
done

echo "==> status overrides and cancels"
urls() { # verb-suffix first last
    local i
    for ((i = $2; i < $3; i++)); do
        local app=$((i % napps))
        printf 'http://127.0.0.1:%s/eureka/apps/BENCH-APP-%d/10.%d.%d.%d:bench-app-%d:8080%s\n' \
            "$port_a" "$app" $((i / 65536 % 256)) $((i / 256 % 256)) $((i % 256)) "$app" "$1"
    done
}
each() { # method url...: one connection, every answer 2xx
    local method=$1 url
    shift
    local args=()
    for url in "$@"; do args+=(-o /dev/null "$url"); done
    curl -fsS -X "$method" "${args[@]}"
}
mapfile -t overrides < <(urls "/status?value=OUT_OF_SERVICE" 0 300)
mapfile -t removals < <(urls "/status?value=UP" 0 300)
mapfile -t cancels < <(urls "" 300 600)
each PUT "${overrides[@]}"
each DELETE "${removals[@]}"
each DELETE "${cancels[@]}"
load 2 16 fetch.lua "$port_b" /eureka/apps/delta json gzip

echo "==> a restart of $port_b, which restores its registry from disk"
kill -TERM "${pids[1]}"
wait "${pids[1]}" || true
pids=("${pids[0]}")
start "$port_b" "$port_a" --heureka.persistence.dir="$work/store"
load 1 4 fetch.lua "$port_b" /eureka/apps json gzip
each GET "http://127.0.0.1:$port_a/actuator/prometheus" "http://127.0.0.1:$port_b/actuator/prometheus"

echo "==> stopping the nodes (they write their counts at exit)"
stop
trap - EXIT
"$profdata" merge --sparse -o pgo/heureka.profdata "$work"/run/*.profraw
echo "pgo/heureka.profdata: $(wc -c <pgo/heureka.profdata) bytes from $(ls "$work"/run/*.profraw | wc -l) servers"
