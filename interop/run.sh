#!/usr/bin/env bash
# The one entry point of Heureka's real-client interop suite.
#
#   interop/run.sh                      # client tests against Heureka + the differential test
#   interop/run.sh --server=java        # client tests against the real Spring Cloud Eureka server
#   interop/run.sh -k restart -x        # any other pytest arguments are passed through
#   interop/run.sh --diff-against=java  # harness self-test: reference vs a second reference
#   interop/run.sh --cluster-kinds=java # cluster tests on clusters of the real Java server
#
# Needs Java 17+ and Maven, Python 3, Node/npm, Go, Rust. Idempotent: installs what is missing or
# changed (interop/.venv from requirements.txt, interop/js/node_modules by npm ci, the Spring
# jars by Maven), builds heureka (cargo build --release -p heureka) unless HEUREKA_BIN
# is set and the Rust client's interop driver unless RUST_CLIENT_DRIVER is set, then runs
# pytest over interop/tests/. Exits with pytest's status.
# Everything listens on 127.0.0.1 only.
set -euo pipefail

INTEROP="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$INTEROP/.." && pwd)"
cd "$INTEROP"

step() { printf '\n==> %s\n' "$*"; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- Python: venv with the pinned py-eureka-client, pytest ------------------------------
step "python venv (interop/.venv)"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
want="$(hash_of requirements.txt)"
if [ "$(cat .venv/.requirements.sha256 2>/dev/null || true)" != "$want" ]; then
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
    echo "$want" > .venv/.requirements.sha256
else
    echo "up to date"
fi

# --- Node: eureka-js-client from the committed lock file --------------------------------
step "npm ci (interop/js)"
want="$(hash_of js/package.json js/package-lock.json)"
if [ ! -d js/node_modules/eureka-js-client ] || [ "$(cat js/node_modules/.interop.sha256 2>/dev/null || true)" != "$want" ]; then
    (cd js && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > js/node_modules/.interop.sha256
else
    echo "up to date"
fi

# --- Java: the reference Eureka server and the Spring client app, without and with --------
# --- Heureka's Spring add-on (spring/, installed into the local Maven repository first) ----
step "mvn install (spring: the push add-on)"
(cd "$REPO" && mvn -q -B -DskipTests -f spring/pom.xml install)
step "mvn package (interop/java)"
(cd java && mvn -q -B -DskipTests package)
# The push variant last: it rebuilds spring-client's classes under another jar name. Removed
# first: Spring Boot's repackaging leaves a jar it already repackaged alone, and the add-on in
# it would stay the one of the previous build.
rm -f java/spring-client/target/spring-client-push.jar
(cd java && mvn -q -B -DskipTests -P push -pl spring-client package)
for jar in java/eureka-server/target/eureka-server.jar java/eureka-server-secure/target/eureka-server-secure.jar \
           java/spring-client/target/spring-client.jar java/spring-client/target/spring-client-push.jar; do
    [ -f "$jar" ] || { echo "missing $jar after mvn package" >&2; exit 1; }
done

# --- Go: the grpc-go xDS client and providers (interop/go/xds), modules from go.sum -------
step "go build (interop/go/xds)"
(cd go/xds && go build -o bin/xds .)

# --- Heureka -------------------------------------------------------------------------------
if [ -n "${HEUREKA_BIN:-}" ]; then
    step "heureka: using HEUREKA_BIN=$HEUREKA_BIN"
    [ -x "$HEUREKA_BIN" ] || { echo "HEUREKA_BIN=$HEUREKA_BIN is not an executable" >&2; exit 1; }
else
    step "cargo build --release -p heureka"
    (cd "$REPO" && cargo build --release -q -p heureka)
    export HEUREKA_BIN="$REPO/target/release/heureka"
fi

# --- the Rust client's driver (crates/heureka-client/examples/interop_driver.rs) ----------
if [ -n "${RUST_CLIENT_DRIVER:-}" ]; then
    step "rust client driver: using RUST_CLIENT_DRIVER=$RUST_CLIENT_DRIVER"
else
    step "cargo build --release -p heureka-client --example interop_driver"
    (cd "$REPO" && cargo build --release -q -p heureka-client --example interop_driver)
    export RUST_CLIENT_DRIVER="$REPO/target/release/examples/interop_driver"
fi

# --- Go's resolver against heureka's DNS (interop/go/dns, standard library only) -----------
step "go build (interop/go/dns)"
(cd go/dns && go build -o bin/dnsprobe .)

# --- the suite ---------------------------------------------------------------------------
step "pytest interop/tests $*"
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
exit $rc
