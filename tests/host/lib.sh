# SPDX-License-Identifier: GPL-2.0
# Harness of the host tests (sourced): the repository top, a scratch directory
# removed on exit, and ok/bad lines counted in $fails. A test ends with
# `[ $fails = 0 ]`.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
