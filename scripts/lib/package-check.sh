# allocscope_package_check DEB: checks a built package the way a user gets it. The package is
# unpacked with `dpkg-deb -x` into an empty root (nothing is installed on this machine), and the
# unpacked CLI and app are run from there: they must find their lessons in ROOT/usr/share/allocscope,
# not in this source tree, and start without a display.
# shellcheck shell=bash

allocscope_package_check() (
    set -euo pipefail
    local deb="${1:?usage: allocscope_package_check DEB}"
    deb="$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")"
    local src
    src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    local work
    # Physical path: the binaries name their folders from /proc/self/exe, which has no symlinks.
    work="$(cd "$(mktemp -d "${TMPDIR:-/tmp}/allocscope-package.XXXXXX")" && pwd -P)"
    trap 'rm -rf "$work"' EXIT
    local root="$work/root"
    mkdir "$root" "$work/home"
    mkdir -m 0700 "$work/runtime"
    fail() { echo "package check: $*" >&2; exit 1; }

    echo "package check: unpacking $(basename "$deb") into an empty root"
    dpkg-deb -x "$deb" "$root" || fail "dpkg-deb cannot unpack $deb"
    local cli="$root/usr/bin/allocscope-cli" app="$root/usr/bin/allocscope"
    local lessons="$root/usr/share/allocscope/lessons"
    # The torch library's private folder, below the multiarch one (resources/CMakeLists.txt says why).
    local torch_lib
    torch_lib="/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/allocscope/liballocscope_torch.so"
    for f in "$cli" "$app" "$lessons" "$root/usr/share/applications/allocscope.desktop" \
        "$root/usr/share/mime/packages/allocscope.xml" "$root/usr/share/icons/hicolor/48x48/apps/allocscope.png" \
        "$root/usr/share/doc/allocscope/copyright" "$root$torch_lib" \
        "$root/usr/lib/python3/dist-packages/allocscope_torch/__init__.py"; do
        [ -e "$f" ] || fail "the package lacks ${f#"$root"}"
    done
    # A packaged binary must not even know where it was built: no source-tree fallback is compiled
    # in (ALLOCSCOPE_SOURCE_RESOURCES=OFF), so the lessons below can only come from the root.
    if grep -qaF "$src/" "$cli" "$app"; then fail "a packaged binary names the source tree $src"; fi

    # Run from an empty folder with a throw-away home, without the lesson override.
    cd "$work"
    local -a env_run=(env -u ALLOCSCOPE_LESSONS_DIR HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config"
        XDG_DATA_HOME="$work/home/.local/share" XDG_RUNTIME_DIR="$work/runtime" QT_QPA_PLATFORM=offscreen)

    "${env_run[@]}" "$cli" --version || fail "allocscope-cli --version failed"
    "${env_run[@]}" "$cli" gpus >/dev/null || fail "allocscope-cli gpus failed"
    "${env_run[@]}" "$cli" help lessons | grep -qxF "Default folder here: $lessons" ||
        fail "allocscope-cli does not default to the packaged lessons ($lessons)"
    local listed shipped
    listed="$("${env_run[@]}" "$cli" lessons | wc -l)"
    shipped="$(find "$lessons" -maxdepth 1 -name '*.json' | wc -l)"
    if [ "$listed" -eq 0 ] || [ "$listed" -ne "$shipped" ]; then
        fail "allocscope-cli lists $listed lessons, the package has $shipped"
    fi
    # A lesson that replays a trace shipped beside it (traces/ of the packaged lesson folder).
    "${env_run[@]}" "$cli" lesson expandable-segments >"$work/lesson.txt" || fail "the packaged lesson did not run"
    grep -q "TRUE\|FALSE\|IT DEPENDS" "$work/lesson.txt" || fail "the packaged lesson printed no verdict"
    # A small replay of a recorded trace from the test data (read only; the CLI writes nothing beside it).
    "${env_run[@]}" "$cli" replay "$src/tests/data/traces/frag101__default.pickle" >/dev/null || fail "the replay failed"
    "${env_run[@]}" "$cli" demo --db "$work/demo.allocscope" >/dev/null || fail "allocscope-cli demo failed"

    # The Python helper loads the packaged library (torch is not needed for that) and, installed,
    # looks for it where the package puts it.
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root/usr/lib/python3/dist-packages" python3 -c '
import sys
from allocscope_torch import _library
_library.load(sys.argv[1] + sys.argv[2])
assert sys.argv[2] in _library.candidates(), _library.candidates()
' "$root" "$torch_lib" || fail "the packaged allocscope_torch cannot load its library"
    # No maintainer scripts (resources/CMakeLists.txt): CPack writes ldconfig calls into postinst
    # and postrm as soon as a shared object lies in /usr/lib or in a folder right below it
    # (lintian: maintscript-calls-ldconfig). The listing is read whole first: grep -q leaving
    # early would make tar fail, and the pipeline with it.
    local control
    control="$(dpkg-deb --ctrl-tarfile "$deb" | tar -t)" || fail "dpkg-deb cannot read the control files of $deb"
    if grep -qE '(postinst|postrm)$' <<<"$control"; then
        fail "the package has maintainer scripts: $(tr '\n' ' ' <<<"$control")"
    fi

    # The app, offscreen: its version, then the demo session shown and saved as a screenshot.
    "${env_run[@]}" "$app" --version || fail "allocscope --version failed"
    "${env_run[@]}" "$app" "$work/demo.allocscope" --screenshot "$work/shot.png" ||
        fail "the packaged app did not show the demo session"
    [ -s "$work/shot.png" ] || fail "the packaged app wrote no screenshot"

    # The desktop entry and the MIME types are well-formed where the tools exist (the package's
    # triggers run the same update-mime-database on a real install).
    if command -v desktop-file-validate >/dev/null 2>&1; then
        desktop-file-validate "$root/usr/share/applications/allocscope.desktop" || fail "the desktop entry is invalid"
    fi
    if command -v update-mime-database >/dev/null 2>&1; then
        XDG_DATA_DIRS="$root/usr/share" update-mime-database "$root/usr/share/mime" || fail "the MIME types do not compile"
        [ -f "$root/usr/share/mime/application/x-allocscope-session.xml" ] || fail "the session MIME type is not defined"
    fi
    echo "package check: ok ($(basename "$deb"): CLI, lessons, replay, the torch library and the offscreen app run from the unpacked root)"
)
