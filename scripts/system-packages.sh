# Sourced by scripts/demo and scripts/test: makes sure the C libraries Tern links are installed.
# Installs them with apt-get when running as root; otherwise prints the exact command and stops.
# `tern_require_system_packages tests` also asks for what the tests run beside tern: the sqlite3
# shell, as another program using a store, and libfiu's fiu-run, which fails system calls.

tern_require_system_packages() {
    local missing=()
    if [ "${1:-}" = tests ]; then
        command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
        command -v fiu-run >/dev/null 2>&1 || missing+=(fiu-utils)
    fi
    pkg-config --exists sqlite3 2>/dev/null || missing+=(libsqlite3-dev)
    pkg-config --exists libuv 2>/dev/null || missing+=(libuv1-dev)
    pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
    pkg-config --exists libcrypto 2>/dev/null || missing+=(libssl-dev)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    [ ${#missing[@]} -eq 0 ] && return 0

    # pkg-config itself may be what is missing; ask for all of them then.
    if ! command -v pkg-config >/dev/null 2>&1; then
        missing+=(pkg-config libsqlite3-dev libuv1-dev zlib1g-dev libssl-dev)
    fi
    if [ "$(id -u)" -eq 0 ]; then
        echo "Installing ${missing[*]} …" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    else
        echo "Tern needs these Debian packages: ${missing[*]}" >&2
        echo "Install them with:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 69
    fi
}
