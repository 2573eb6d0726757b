#!/usr/bin/env bash
# Release one dataset version: tag the commit whose dvc.lock pins the data, push the data.
#   scripts/release.sh <dataset> <vX.Y>      e.g. scripts/release.sh babel-imagenet v1.0
# Needs a clean git tree and an up-to-date pipeline (dvc repro done, dvc.lock committed).
# The data goes to the default DVC remote (`dvc remote add -d ...`: a local folder, s3://, gs://).
set -euo pipefail
dvc=${DVC:-dvc}   # override (e.g. "python -m dvc") when dvc is not on PATH

if [ $# -ne 2 ]; then echo "usage: scripts/release.sh <dataset> <vX.Y>" >&2; exit 2; fi
dataset=$1 version=$2
if ! [[ $dataset =~ ^[a-z0-9][a-z0-9-]*$ ]]; then
  echo "release: dataset must be a card name like babel-imagenet, got '$dataset'" >&2; exit 1
fi
if ! [[ $version =~ ^v[0-9]+\.[0-9]+(\.[0-9]+)?$ ]]; then
  echo "release: version must look like v1.0 or v1.0.1, got '$version'" >&2; exit 1
fi
if ! git diff --quiet || ! git diff --cached --quiet; then
  echo "release: uncommitted changes; commit dvc.lock and params.yaml first" >&2; exit 1
fi
if ! $dvc status --quiet; then
  echo "release: the pipeline is not up to date; run dvc repro and commit dvc.lock" >&2; exit 1
fi
tag="$dataset/$version"
if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
  echo "release: tag $tag exists already; a version is never moved" >&2; exit 1
fi
# Data first, tag second: a failed push leaves no tag, so the same command can simply be rerun.
$dvc push
git tag -a "$tag" -m "$dataset $version"
echo "release: tagged $tag and pushed its data. Next:" >&2
echo "  git push origin $tag" >&2
echo "  babelforge publish $dataset --repo ORG/NAME --revision-tag $version --dry-run   # then without --dry-run" >&2
