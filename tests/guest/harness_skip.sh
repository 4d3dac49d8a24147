# SPDX-License-Identifier: GPL-2.0
# The harness's skip code: a test that cannot run in this kernel exits 4
# (kselftest's KSFT_SKIP) through skip() after saying why. guest/init reports
# it "ok N - harness_skip # SKIP <why>", and qemu.sh records it as
# "SKIP arch:harness_skip", neither passed nor failed; make test checks that
# record (it runs this in the lockdep boot).
set -u
. /tests/lib.sh

skip "this test always skips: it checks the harness's skip code"
