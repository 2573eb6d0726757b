#!/usr/bin/env bash
# Set up a fresh machine for babelforge: system packages (Debian), a virtual environment
# in .venv from the one pinned package set (constraints.txt), and the package itself.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=()
[ -f /usr/share/wordnet/data.noun ] || apt_packages+=(wordnet-base)
[ -f /usr/share/wordnet/index.sense ] || apt_packages+=(wordnet-sense-index)
if [ "${BABELFORGE_BROWSER_TESTS:-1}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  apt_packages+=(chromium)
fi
if [ ${#apt_packages[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${apt_packages[*]} with apt-get" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${apt_packages[@]}" >/dev/null
fi

# pip keeps no cache: the CUDA build of torch and its libraries are several GB, and a cached copy doubles that on a
# machine whose disk may be small (a CI run once stopped at "No space left on device" while installing)
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --no-cache-dir "pip<26"
.venv/bin/python -m pip install -q --disable-pip-version-check --no-cache-dir -c constraints.txt -e '.[test,ray,models]'
# BabelNet's own package (senses.source: babelnet_index) declares Python ==3.8.* only; its client runs on this
# Python, so it is installed apart, without its declared dependencies (the babelnet-index extra holds them)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-cache-dir -c constraints.txt --no-deps --ignore-requires-python babelnet
echo "setup: ready (.venv/bin/babelforge, .venv/bin/dvc)" >&2
