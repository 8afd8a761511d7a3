#!/usr/bin/env bash
# Runs every test Heureka has, from a fresh clone: lint, unit and HTTP tests, the real-client
# and Java-interop suites (which install their own Python, npm and Maven dependencies), and a
# smoke run of the benchmark harness. Exits non-zero if any suite fails.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failures=()

# A one-shot build gains nothing from incremental compilation, whose caches would take another
# 1.7 GB. The free space is printed first because a full disk fails every suite at once.
export CARGO_INCREMENTAL=0
echo "==> disk free where the tests build: $(df -h . | awk 'NR == 2 { print $4 }')"

suite() {
    local name=$1 started=$SECONDS
    shift
    echo
    echo "==> $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$name")
    fi
    # Each suite's time, so the slowest can be found from a CI log (the run must stay under 45 min).
    echo "<== $name: $((SECONDS - started)) s"
}

# wrk drives the benchmark smoke run; it comes from Debian's packages.
if ! command -v wrk >/dev/null 2>&1; then
    echo "==> installing wrk"
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq && apt-get install -y -qq wrk >/dev/null
    else
        sudo apt-get update -qq && sudo apt-get install -y -qq wrk >/dev/null
    fi
fi

# Debian's prometheus scrapes a real heureka and discovers targets from it in the interop
# suite (test_prometheus.py, test_prometheus_sd.py).
if ! command -v prometheus >/dev/null 2>&1; then
    echo "==> installing prometheus"
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq && apt-get install -y -qq prometheus >/dev/null
    else
        sudo apt-get update -qq && sudo apt-get install -y -qq prometheus >/dev/null
    fi
fi

# dig (Debian's bind9-dnsutils) asks heureka's DNS server in the interop suite (test_dns.py).
if ! command -v dig >/dev/null 2>&1; then
    echo "==> installing bind9-dnsutils"
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq && apt-get install -y -qq bind9-dnsutils >/dev/null
    else
        sudo apt-get update -qq && sudo apt-get install -y -qq bind9-dnsutils >/dev/null
    fi
fi

suite "cargo fmt" cargo fmt --all --check
suite "cargo clippy" cargo clippy --workspace --all-targets --quiet -- -D warnings
suite "cargo test" cargo test --workspace
# 10 s per target: a smoke run (the committed seeds, then a little more), built unoptimised
# because the nightly build of the targets is most of its time; long runs are
# `FUZZ_SECONDS=600 scripts/fuzz-smoke.sh` (optimised).
suite "fuzz smoke (10 s per target)" env FUZZ_BUILD=dev FUZZ_SECONDS=10 bash scripts/fuzz-smoke.sh
suite "release build" cargo build --release --quiet -p heureka
suite "spring add-on" env HEUREKA_BIN="$PWD/target/release/heureka" mvn -q -B -f spring/pom.xml verify
suite "benchmark smoke" python3 bench/run.py --smoke
# The Rust client's driver is the one `cargo test` built (an example of heureka-client): a
# release build of it would compile the server again with the examples' dev-dependencies.
suite "real clients and Java interop" env HEUREKA_BIN="$PWD/target/release/heureka" \
    RUST_CLIENT_DRIVER="$PWD/target/debug/examples/interop_driver" bash interop/run.sh
suite "dashboard in headless chromium" env HEUREKA_BIN="$PWD/target/release/heureka" bash interop/browser/run.sh

echo
if [ "$failed" -gt 0 ]; then
    echo "failed suites: ${failures[*]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
