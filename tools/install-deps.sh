#!/bin/sh
# install-deps.sh - install what tensorleak builds and tests with, from
# Debian 12's packages (python3-venv: tools/test-all.sh's torch 2.x venv
# when pyenv has no 3.11). Needs root (or sudo); does nothing if all is there.
set -eu
PKGS="build-essential autoconf automake libtool pkg-config libjemalloc-dev libunwind-dev
libdw-dev libelf-dev check libxxhash-dev libzstd-dev python3-dev python3-venv python3-torch python3-numpy python3-pytest
clang libclang-rt-14-dev chromium"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
