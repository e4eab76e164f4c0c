# Shared by scripts/run and scripts/test: find the repository, install what is missing.
# shellcheck shell=bash

ALLOCSCOPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian packages the build and the tests need. The CUDA toolkit is optional and never installed
# here (it is found at /usr/local/cuda when present). libqt6opengl6-dev is only a "recommends" of
# qt6-charts-dev, but Qt6Charts' CMake package requires it (Qt Charts links it; our sources never
# use OpenGL). mold and ccache only make builds faster (CMake links with mold when the compiler
# accepts it; ccache lets one Release build's objects serve the next): the build works without.
ALLOCSCOPE_PACKAGES=(cmake ninja-build g++ pkg-config qt6-base-dev qt6-charts-dev qt6-svg-dev
    libqt6opengl6-dev libqt6svg6 libsqlite3-dev libgl-dev xvfb xauth python3 mold ccache)

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

# Compiler cache: used when ccache is installed (ensure_packages installs it; the build works
# without). The base directory makes cached objects reusable between clones of the repository at
# other paths. Depend mode takes the header list from the compiler's own -MD output, so a cache
# miss costs no extra preprocessor run (a cold CI cache misses on every file).
launcher_args() {
    if command -v ccache >/dev/null 2>&1; then
        export CCACHE_BASEDIR="$ALLOCSCOPE_ROOT"
        export CCACHE_DEPEND="${CCACHE_DEPEND:-1}"
        echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
    fi
}

# One compiler cache for the Release builds of this run (scripts/test): emptied first, and
# -Werror left out of its hash, so the package's Release build (same flags, maybe without
# -Werror) reuses the objects the headless check compiled with -Werror. Safe because the cache
# starts empty and the -Werror build fills it first: every object in it compiled without a
# warning, so whatever reuses it would have compiled without one too.
release_cache() {
    export CCACHE_DIR="$ALLOCSCOPE_ROOT/build/ccache-release"
    export CCACHE_IGNOREOPTIONS="-Werror"
    rm -rf "$CCACHE_DIR"
    mkdir -p "$CCACHE_DIR"
}
