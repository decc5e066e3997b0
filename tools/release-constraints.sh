#!/bin/bash
# Write upper-constraints-<release>.txt for each older release we
# support: the versions of everything our tests install, as the package
# index offered them a few weeks after that release (the date below),
# except the services themselves, which take their latest point release
# in the series (what a cloud on that release runs), and cursive, whose
# later releases run on cryptography 47, which dropped curves cursive's
# earlier ones name (and which Nova imports), and four of Horizon's
# XStatic packages, whose releases of the time are sdists that no longer
# build (they import pkg_resources, gone from setuptools 81) and whose
# later ones are wheels of the same files. The newest release
# is upper-constraints.txt, a freeze of a green run.
#
#   tools/release-constraints.sh            # every release
#   tools/release-constraints.sh 2025.1     # one
#
# Needs uv (pip install uv) and the package index.
set -eu -o pipefail
cd "$(dirname "$0")/.."

# release  cut-off   nova placement blazar blazar-nova keystone horizon
RELEASES="
2025.1 2025-05-15 31 13 15 7 27 25.3
2026.1 2026-05-15 33 15 17 9 29 25.7
"

compile_release() {
    local release=$1 cutoff=$2 nova=$3 placement=$4 blazar=$5
    local blazar_nova=$6 keystone=$7 horizon=$8
    local services now
    services=$(mktemp)
    now=$(date -u +%Y-%m-%d)
    printf '%s\n' "nova==${nova}.*" "openstack-placement==${placement}.*" \
        "blazar==${blazar}.*" "blazar-nova==${blazar_nova}.*" \
        "keystone==${keystone}.*" "horizon==${horizon}.*" > "$services"
    # The test requirements without the services' own lines (above).
    grep -v -E '^(nova|openstack-placement|blazar|blazar-nova|keystone|horizon)>=' \
        test-requirements.txt > "$services.test"
    uv pip compile --quiet --python-version 3.11 --no-header \
        --no-annotate --exclude-newer "$cutoff" \
        --exclude-newer-package "nova=$now" \
        --exclude-newer-package "openstack-placement=$now" \
        --exclude-newer-package "blazar=$now" \
        --exclude-newer-package "blazar-nova=$now" \
        --exclude-newer-package "keystone=$now" \
        --exclude-newer-package "horizon=$now" \
        --exclude-newer-package "cursive=$now" \
        --exclude-newer-package "xstatic-angular-schema-form=$now" \
        --exclude-newer-package "xstatic-objectpath=$now" \
        --exclude-newer-package "xstatic-term-js=$now" \
        --exclude-newer-package "xstatic-tv4=$now" \
        "$services" requirements.txt "$services.test" \
        -o "$services.out"
    {
        echo "# OpenStack ${release}: written by tools/release-constraints.sh"
        echo "# (index as of ${cutoff}; services at their latest ${release}"
        echo "# point release)."
        cat "$services.out"
    } > "upper-constraints-${release}.txt"
    rm -f "$services" "$services.test" "$services.out"
}

while read -r release rest; do
    [ -n "$release" ] || continue
    if [ $# -eq 0 ] || [ "$1" = "$release" ]; then
        # shellcheck disable=SC2086
        compile_release "$release" $rest
    fi
done <<< "$RELEASES"
