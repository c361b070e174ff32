#!/usr/bin/env bash
# The system packages the test suite needs beyond what pip puts in .venv, installed with
# apt-get only when missing (`make test` runs this first; safe to run again):
#   chromium    the browser tests drive the dashboard in it, through Playwright's
#               executable_path (Playwright's own browser download is not used)
#   bubblewrap  `bwrap`, the sandbox that runs generated code
#   python3     /usr/bin/python3, the sandbox's interpreter (.venv's is not mounted in it)
#   python3-venv  ensurepip, without which Debian's python cannot make .venv
#   g++         llama-cpp-python is published as source only: pip compiles llama.cpp
#   postgresql  the store's tests run on SQLite and on a throwaway PostgreSQL cluster that
#               tests/helpers/postgres.py makes with /usr/lib/postgresql/*/bin/initdb
# When everything is present this
# prints nothing and changes nothing; otherwise it says what it installs and why, runs
# `apt-get update` once and installs only what is missing, as root or through sudo.
set -euo pipefail

missing=()
reasons=()
need() {  # need PACKAGE WHY: PACKAGE is missing
    missing+=("$1")
    reasons+=("  $1: $2")
}

chromium="${CANTATA_CHROMIUM:-/usr/bin/chromium}"  # the path the browser tests launch
[ -x "$chromium" ] || need chromium "the dashboard's browser tests run it ($chromium is missing)"
command -v bwrap >/dev/null || need bubblewrap "the sandbox tests run generated code under bwrap (not found)"
[ -x /usr/bin/python3 ] || need python3 "the sandbox runs generated code with /usr/bin/python3 (missing)"
python="${PYTHON:-python3}"  # the interpreter the Makefile makes .venv with
if ! command -v "$python" >/dev/null || ! "$python" -c "import ensurepip" 2>/dev/null; then
    need python3-venv "make creates .venv with $python -m venv, which needs ensurepip"
fi
command -v c++ >/dev/null || need g++ "pip compiles llama.cpp (llama-cpp-python) with a C++ compiler"
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null ||
    need postgresql "the store's tests run on a throwaway PostgreSQL (no /usr/lib/postgresql/*/bin/initdb)"

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    echo "error: the tests need these system packages and this is not a Debian-like system (no apt-get):" >&2
    printf '%s\n' "${reasons[@]}" >&2
    echo "install them with your package manager, then run make test again" >&2
    exit 1
fi

as_root=()
how="as root"
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "error: the tests need these system packages, and installing them needs root (no sudo here):" >&2
        printf '%s\n' "${reasons[@]}" >&2
        echo "as root: apt-get update && apt-get install --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
    as_root=(sudo)
    how="through sudo (it may ask for your password)"
fi

echo ">> Installing the system packages the tests need, with apt-get $how:"
printf '%s\n' "${reasons[@]}"
# Wait for another apt (a fresh machine's unattended upgrades) instead of failing on its lock.
apt=(apt-get -q -o DPkg::Lock::Timeout=600)
"${as_root[@]}" "${apt[@]}" update
# env: sudo drops the caller's environment, so the variable is set on its far side.
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
