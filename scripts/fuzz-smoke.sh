#!/usr/bin/env bash
# Runs each cargo-fuzz target of fuzz/ for a short while (FUZZ_SECONDS, default 60) from its
# committed seeds, and fails if any target finds a crash, a hang or a document that does not
# re-parse. Installs cargo-fuzz if missing; needs the nightly toolchain.
#
#   scripts/fuzz-smoke.sh                      # every target, 60 s each
#   FUZZ_SECONDS=600 scripts/fuzz-smoke.sh round_trip
#   FUZZ_BUILD=dev FUZZ_SECONDS=10 scripts/fuzz-smoke.sh   # CI's smoke run
#
# FUZZ_BUILD=release (the default) is cargo-fuzz's optimised build, for runs that search.
# FUZZ_BUILD=dev builds in half the time (about 3 minutes instead of 6 on two cores) and runs
# with overflow checks and debug assertions, at about a tenth of the executions per second:
# right for a smoke run, whose build is most of its time.
#
# The sanitizer is off by default (FUZZ_SANITIZER=address turns it on): Heureka's crates forbid
# `unsafe`, so AddressSanitizer would only watch the dependencies' unsafe code, at a third of the
# executions. libFuzzer's working corpus goes to fuzz/corpus/<target> (ignored by git), crashes
# to fuzz/artifacts/<target>.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
sanitizer=${FUZZ_SANITIZER:-none}
case "${FUZZ_BUILD:-release}" in
    release) build=(--release) ;;
    dev) build=(--dev) ;;
    *) echo "fuzz-smoke: FUZZ_BUILD is release or dev, not ${FUZZ_BUILD}" >&2; exit 2 ;;
esac
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(decode_instance_json decode_instance_xml round_trip decode_stamped config_load
        register_path negotiate request_target)
fi

if ! rustup toolchain list | grep -q '^nightly'; then
    echo "fuzz-smoke: the nightly toolchain is not installed (rustup toolchain install nightly)" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz"
    cargo install cargo-fuzz --locked --quiet || exit 2
fi

passed=0
failed=0
for target in "${targets[@]}"; do
    echo "==> fuzzing $target for ${seconds}s"
    mkdir -p "fuzz/corpus/$target"
    log=$(mktemp)
    # A hang is any input taking more than 10 s; libFuzzer reports it as a failure.
    cargo +nightly fuzz run --fuzz-dir fuzz "${build[@]}" -s "$sanitizer" "$target" \
        "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
        -dict=fuzz/eureka.dict -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1
    status=$?
    runs=$(grep -Eo '^Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' || echo "?")
    if [ $status -eq 0 ]; then
        echo "fuzz $target: $runs executions in ${seconds}s, no failure"
        passed=$((passed + 1))
    else
        tail -n 40 "$log"
        echo "fuzz $target: FAILED (exit $status); the input is in fuzz/artifacts/$target/"
        failed=$((failed + 1))
    fi
    rm -f "$log"
done

echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
