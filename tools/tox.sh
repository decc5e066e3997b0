#!/bin/bash
# Run tox from a private virtualenv, creating it on first use, so a fresh
# machine with only python3 needs nothing installed by hand.
set -e
cd "$(dirname "$0")/.."
BOOT=${PCLOUD_TOX_BOOTSTRAP:-.tox-bootstrap}
if [ ! -x "$BOOT/bin/tox" ]; then
    python3 -m venv "$BOOT"
    "$BOOT/bin/pip" install --quiet --upgrade pip
    "$BOOT/bin/pip" install --quiet 'tox>=4.6.0,<5'
fi
exec "$BOOT/bin/tox" "$@"
