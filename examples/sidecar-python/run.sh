#!/usr/bin/env bash
# Runs app.py on $PORT (8000) with `heureka sidecar` in front of it, registered as PYAPP with
# the Eureka server at $EUREKA_URL (http://127.0.0.1:8761/eureka/). Ctrl-C stops both: the
# sidecar cancels the registration, then the app is stopped.
#
#   examples/sidecar-python/run.sh                 # heureka from target/release, built if missing
#   HEUREKA=/usr/local/bin/heureka examples/sidecar-python/run.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PORT="${PORT:-8000}"
EUREKA_URL="${EUREKA_URL:-http://127.0.0.1:8761/eureka/}"
if [ -z "${HEUREKA:-}" ]; then
    HEUREKA="$repo/target/release/heureka"
    [ -x "$HEUREKA" ] || (cd "$repo" && cargo build --release -p heureka)
fi

cd "$here"              # `touch unhealthy` here makes the app fail its health check
app="" sidecar=""
stop() {
    # the sidecar first, so that it cancels while the app still runs
    [ -n "$sidecar" ] && kill -TERM "$sidecar" 2>/dev/null && wait "$sidecar" || true
    [ -n "$app" ] && kill -TERM "$app" 2>/dev/null && wait "$app" || true
}
trap stop EXIT
trap 'exit 130' INT TERM

python3 app.py --port "$PORT" &
app=$!
# the sidecar would register the app DOWN until its next health check if it started first
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
"$HEUREKA" sidecar --app pyapp --port "$PORT" --health-url "http://127.0.0.1:$PORT/health" \
    --host 127.0.0.1 --ip 127.0.0.1 --health-interval 5 --eureka "$EUREKA_URL" \
    --eureka.instance.metadata-map.version=canary &
sidecar=$!
wait "$sidecar"
