# The heureka image: built in a Rust image, run from a slim Debian as a non-root user.
#
#   docker build -t heureka --build-arg HEUREKA_GIT_SHA=$(git rev-parse --short=12 HEAD) .
#   docker run -p 8761:8761 heureka
#
# Configuration as for the Java server: SPRING_*/EUREKA_*/SERVER_* environment variables, or an
# application.yml mounted at /app/application.yml (or /app/config/application.yml).

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# .git is not copied (see .dockerignore): the commit for /actuator/info comes in as an argument.
ARG HEUREKA_GIT_SHA=""
ENV HEUREKA_GIT_SHA=${HEUREKA_GIT_SHA}
RUN cargo build --release --locked -p heureka \
    && strip target/release/heureka

FROM debian:bookworm-slim
# curl only for the HEALTHCHECK below; heureka itself needs nothing beyond glibc.
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin heureka \
    && mkdir -p /app && chown heureka /app
COPY --from=build /src/target/release/heureka /usr/local/bin/heureka
COPY LICENSE /usr/share/doc/heureka/LICENSE
USER 10001
WORKDIR /app
EXPOSE 8761
# Liveness, not readiness: a node still syncing from its peers is healthy, only not ready.
# No ENV SERVER_PORT here: the environment outranks application.yml, so setting it would
# silently override a mounted file's server.port. Set SERVER_PORT when moving the port.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD curl -fsS "http://127.0.0.1:${SERVER_PORT:-8761}/actuator/health/liveness" || exit 1
ENTRYPOINT ["/usr/local/bin/heureka"]
