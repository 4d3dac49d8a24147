// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_io_buf_sink_send.rs`: what the sink says is sent instead.

use kernel::io_buf::Sink;

fn send<T: Send>(_: T) {}

/// Hands a sink's length to another thread.
pub fn f(s: Sink<'_>) {
    send(s.len());
}
