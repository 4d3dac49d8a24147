// expect: error[E0277]: `*mut u8` cannot be sent between threads safely
// SPDX-License-Identifier: GPL-2.0

//! A sink stays on its thread: a bio's page may be lent through a mapping of this thread's
//! (`kmap_local_page()`). Documented at `kernel::io_buf::Sink`.

use kernel::io_buf::Sink;

fn send<T: Send>(_: T) {}

/// Hands a sink to another thread.
pub fn f(s: Sink<'_>) {
    send(s);
}
