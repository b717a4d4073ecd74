#!/usr/bin/env bash
# Renders the kvlab report of result directories and screenshots the whole page with
# headless chromium (Debian package `chromium`).
#
#   scripts/report-screenshot.sh RESULT_DIR[,RESULT_DIR…] OUT.png [WIDTH [HEIGHT]]
#
# RESULT_DIR is searched recursively for result.json, as `kvlab report` does; several
# directories, separated by commas, make one report. WIDTH is the
# window width in pixels (default 1400); the height is the page's, or at most HEIGHT
# pixels (the top of the page: the summary table and the first charts). With pngquant on
# PATH the PNG is reduced to 256 colours, which keeps a report's flat colours. kvlab is $KVLAB, else
# `kvlab` on PATH, else the release or debug build in $CARGO_TARGET_DIR
# (default $HOME/.cache/kvlab-target); chromium is $KVLAB_CHROMIUM, else `chromium`.
set -euo pipefail
if [[ $# -lt 2 || $# -gt 4 ]]; then
    echo "usage: $0 RESULT_DIR[,RESULT_DIR…] OUT.png [WIDTH [HEIGHT]]" >&2
    exit 2
fi
IFS=, read -r -a dirs <<< "$1"
out="$2"
width="${3:-1400}"
max_height="${4:-16000}"
if ! [[ "$width" =~ ^[1-9][0-9]*$ && "$max_height" =~ ^[1-9][0-9]*$ ]]; then
    echo "$0: WIDTH and HEIGHT are pixel counts, e.g. 1200 900" >&2
    exit 2
fi
target="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
if [[ -n "${KVLAB:-}" ]]; then
    kvlab="$KVLAB"
elif command -v kvlab > /dev/null; then
    kvlab=kvlab
elif [[ -x "$target/release/kvlab" ]]; then
    kvlab="$target/release/kvlab"
elif [[ -x "$target/debug/kvlab" ]]; then
    kvlab="$target/debug/kvlab"
else
    echo "$0: no kvlab binary: set KVLAB or build it (cargo build --release -p kvlab)" >&2
    exit 2
fi
browser="${KVLAB_CHROMIUM:-chromium}"
if ! command -v "$browser" > /dev/null; then
    echo "$0: $browser not found (apt-get install chromium, or set KVLAB_CHROMIUM)" >&2
    exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$kvlab" report "${dirs[@]}" --html "$tmp/report.html" --quiet
chrome=("$browser" --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars
    "--user-data-dir=$tmp/profile")
# Measure the page at the chosen width: a copy of the report writes its height into the
# title, which --dump-dom prints.
sed 's|</body>|<script>document.title = "height=" + document.documentElement.scrollHeight;</script></body>|' \
    "$tmp/report.html" > "$tmp/measure.html"
height="$("${chrome[@]}" "--window-size=$width,1000" --dump-dom "file://$tmp/measure.html" \
    2> /dev/null | sed -n 's|.*<title>height=\([0-9]*\)</title>.*|\1|p' | head -n 1)"
if [[ -z "$height" ]]; then
    echo "$0: chromium did not render $tmp/report.html" >&2
    exit 1
fi
# Chromium refuses very tall windows; a longer page is cut at 16000 pixels.
(( height > 16000 )) && height=16000
(( height > max_height )) && height=$max_height
"${chrome[@]}" "--window-size=$width,$height" "--screenshot=$(realpath -m "$out")" \
    "file://$tmp/report.html" 2> /dev/null
if command -v pngquant > /dev/null; then
    pngquant --force --skip-if-larger --strip --output "$out" -- "$out" || true
fi
echo "$out: ${width}x$height"
