#!/usr/bin/env bash
# System packages the test suite needs beyond the pip registry, installed only if missing:
# Chromium for the dashboard's browser test (driven by Playwright through executable_path,
# because Playwright's own browser download cannot work here); bubblewrap and the system
# python3 for the sandbox that runs generated code. Safe to run again.
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null || missing+=(bubblewrap)
[ -x /usr/bin/python3 ] || missing+=(python3)

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then as_root=(sudo); else
        echo "error: ${missing[*]} missing and not root (no sudo): install them with apt-get" >&2
        exit 1
    fi
fi
echo ">> Installing system packages: ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
