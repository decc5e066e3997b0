#!/bin/bash
# The user guide's pictures of the dashboard (doc/source/user/
# dashboard.rst), taken from the sandbox by the browser test that walks
# the same story (test_dashboard), in the functional environment:
#
#   doc/tools/capture_dashboard.sh
set -eu -o pipefail
cd "$(dirname "$0")/../.."
export PCLOUD_DASHBOARD_PICTURES=$PWD/doc/source/user/images
./tools/browser.sh
./tools/tox.sh -e functional --notest
.tox/functional/bin/stestr --test-path=./pcloud_plugin/tests/functional \
    run --concurrency 1 'test_dashboard\.'
ls -l "$PCLOUD_DASHBOARD_PICTURES"/dashboard-*.png
