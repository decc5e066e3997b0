#!/bin/bash
# The browser of the dashboard's tests (pcloud_plugin/tests/functional/
# sandbox/browser.py): Debian's chromium and chromium-driver, installed
# where they are missing and this user may install packages, so that a
# fresh machine runs those tests with nothing installed by hand.
# Elsewhere it says what is missing, and the tests skip saying why.
set -eu -o pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
if ! command -v apt-get > /dev/null; then
    echo "browser.sh: no apt-get here: install Chromium and its driver" \
        "at /usr/bin/chromium and /usr/bin/chromedriver for the" \
        "dashboard's browser tests (they skip without them)."
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "browser.sh: not root: 'sudo apt-get install chromium" \
        "chromium-driver' for the dashboard's browser tests (they skip" \
        "without them)."
    exit 0
fi
echo "browser.sh: installing Debian's chromium and chromium-driver"
export DEBIAN_FRONTEND=noninteractive
# A mirror that fails once is tried again before the run fails.
for attempt in 1 2 3; do
    if apt-get update -qq \
        && apt-get install -y -qq --no-install-recommends \
            chromium chromium-driver > /dev/null; then
        exit 0
    fi
    echo "browser.sh: apt-get failed (attempt $attempt)"
    sleep 10
done
exit 1
