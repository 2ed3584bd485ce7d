#!/usr/bin/env bash
# Install the Debian packages listed in $1 that are not installed yet. Idempotent and quick
# when nothing is missing: no apt-get call at all then.
set -euo pipefail
list=${1:?usage: install-apt.sh PACKAGES_FILE}
mapfile -t wanted < <(grep -v '^\s*#' "$list" | grep -v '^\s*$')
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing Debian packages (${missing[*]}); run 'make setup' as root" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
