#!/bin/bash
# Rehearse a release: tag HEAD of a throwaway clone with VERSION, as the
# release would be tagged, build the sdist and wheel there as pbr makes
# them from the tag, and check that both carry VERSION exactly (not
# VERSION.devN) and pass twine's checks. Nothing is tagged here.
#
#   tools/release-rehearsal.sh 0.1.0 [OUTDIR]
set -eu -o pipefail
version=${1:?usage: $0 VERSION [OUTDIR]}
top=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${2:-$work/dist}

git clone --quiet "$top" "$work/src"
git -C "$work/src" -c user.name=release -c user.email=release@localhost \
    tag -a -m "pcloud-plugin $version" "$version"
python -m build --sdist --wheel --outdir "$out" "$work/src" > "$work/build.log" \
    || { cat "$work/build.log"; exit 1; }
for artefact in "pcloud_plugin-$version.tar.gz" \
                "pcloud_plugin-$version-py3-none-any.whl"; do
    if [ ! -f "$out/$artefact" ]; then
        echo "no $artefact from tag $version; made:" "$(ls "$out")" >&2
        exit 1
    fi
done
twine check --strict "$out"/*
echo "release $version: sdist and wheel built from its tag"
