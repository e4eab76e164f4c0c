# Shared by scripts/run and scripts/test: find the repository, install what is missing.
# shellcheck shell=bash

ALLOCSCOPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian packages the build and the tests need. The CUDA toolkit is optional and never installed
# here (it is found at /usr/local/cuda when present). libqt6opengl6-dev is only a "recommends" of
# qt6-charts-dev, but Qt6Charts' CMake package requires it (Qt Charts links it; our sources never
# use OpenGL).
ALLOCSCOPE_PACKAGES=(cmake ninja-build g++ pkg-config qt6-base-dev qt6-charts-dev qt6-svg-dev
    libqt6opengl6-dev libqt6svg6 libsqlite3-dev libgl-dev xvfb xauth python3)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "allocscope: need root (or sudo) to install: $*" >&2
        return 1
    fi
}

# Installs only what is missing, with one `apt-get update` first (CI has no terminal: everything
# is non-interactive).
ensure_packages() {
    local missing=()
    local pkg
    for pkg in "${ALLOCSCOPE_PACKAGES[@]}" "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        return 0
    fi
    echo "allocscope: installing missing packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -y -q install --no-install-recommends "${missing[@]}"
}

jobs_count() {
    local n
    n="$(nproc 2>/dev/null || echo 2)"
    echo "${ALLOCSCOPE_JOBS:-$n}"
}

# Compiler cache: used when ccache is installed (it is optional; nothing installs it). The base
# directory makes cached objects reusable between clones of the repository at other paths.
launcher_args() {
    if command -v ccache >/dev/null 2>&1; then
        export CCACHE_BASEDIR="$ALLOCSCOPE_ROOT"
        echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
    fi
}
