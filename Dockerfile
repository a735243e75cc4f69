# syntax=docker/dockerfile:1.7
# Kakapo in a container. The build stage makes the release archive with tools/release.sh (Swift 6.3 on
# Debian 12, as the release machine); the runtime stage is the system tools/check-clean-machine.sh proves
# the archive on: Debian 12 with only the packages on the archive README's "Runtime packages:" line.
#
#   docker build -t kakapo .
#   docker run --rm -p 8080:8080 -e KAKAPO_ADMIN_TOKEN=change-me-please kakapo
#   docker run --rm -p 8080:8080 -e KAKAPO_ADMIN_TOKEN=change-me-please -v "$PWD/cassettes:/cassettes" kakapo \
#       record --upstream https://api.example.com --cassette /cassettes/api.json --port 8080
#
# The container listens on 0.0.0.0 (to be reachable through a published port), so record, replay and serve
# start only with an admin token (KAKAPO_ADMIN_TOKEN, or KAKAPO_ADMIN_TOKEN_FILE naming a file such as a
# Docker secret): /__kakapo/* then requires `Authorization: Bearer TOKEN`.

FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libcurl4-openssl-dev zlib1g-dev pkg-config binutils \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN tools/release.sh \
    && mkdir -p /out \
    && tar -xzf dist/kakapo-*-linux-*.tar.gz -C /out --strip-components=1 \
    && sed -n 's/^Runtime packages: *//p' /out/README > /out/runtime-packages

FROM debian:bookworm-slim
COPY --from=build /out/runtime-packages /tmp/runtime-packages
RUN apt-get update \
    && apt-get install -y --no-install-recommends $(cat /tmp/runtime-packages) \
    && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages
COPY --from=build /out/bin/kakapo /usr/local/bin/kakapo
COPY --from=build /out/share/ /usr/local/share/
COPY --from=build /out/LICENSE /out/README /usr/local/share/kakapo/
COPY --chmod=755 <<'EOT' /usr/local/bin/kakapo-container
#!/bin/sh
# Runs kakapo; record, replay and serve listen on 0.0.0.0 and need an admin token.
set -eu
case "${1:-}" in
    record | replay | serve) ;;
    *) exec kakapo "$@" ;;
esac
if [ -z "${KAKAPO_ADMIN_TOKEN:-}" ] && [ -z "${KAKAPO_ADMIN_TOKEN_FILE:-}" ]; then
    echo "kakapo container: set KAKAPO_ADMIN_TOKEN (8 characters or more) or KAKAPO_ADMIN_TOKEN_FILE;" \
        "the container listens on 0.0.0.0, so /__kakapo/* must require a token" >&2
    exit 2
fi
command=$1
shift
if [ -n "${KAKAPO_ADMIN_TOKEN_FILE:-}" ]; then
    set -- --admin-token-file "$KAKAPO_ADMIN_TOKEN_FILE" "$@"
fi
exec kakapo "$command" --host 0.0.0.0 "$@"
EOT
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/kakapo kakapo \
    && mkdir -p /cassettes && chown kakapo:kakapo /cassettes \
    && kakapo --version
USER kakapo
WORKDIR /cassettes
VOLUME ["/cassettes"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/kakapo-container"]
CMD ["replay", "--cassette", "/usr/local/share/kakapo/demo.json", "--port", "8080"]
