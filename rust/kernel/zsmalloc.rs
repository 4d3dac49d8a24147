// SPDX-License-Identifier: GPL-2.0

//! zsmalloc, the allocator that stores compressed pages.
//!
//! A [`Pool`] hands out objects of up to one page. An allocation starts as a [`NewObject`],
//! which can only be written; [`NewObject::write`] turns it into a [`Handle`], which can only be
//! read, through a scoped mapping guard, [`ReadGuard`]. Both free their object when dropped. A
//! [`Table`] keeps objects (or plain words) in slots with a lock each, and owns its pool. A
//! [`Deferred`] queues frees per CPU and hands them in batches to a drain callback that runs on a
//! worker.
//!
//! # Safety model
//!
//! - An allocation is owned: [`NewObject`] and [`Handle`] are neither `Copy` nor `Clone`, and free
//!   their object when dropped, so a double free or a use after free does not compile and an
//!   early return (`?`) does not leak. Leaking an object takes [`core::mem::forget`].
//! - Both borrow their pool (`Handle<'pool>`): an object cannot outlive its pool, and every
//!   operation reaches the pool that allocated the object. A structure that keeps its pool and
//!   its objects together (a block device's slot table) uses a [`Table`], which owns its pool
//!   through an [`Arc`](crate::sync::Arc) and stores the objects as bare C handles, 16 bytes per
//!   slot with the slot's lock on 64-bit.
//! - zsmalloc does not initialise objects: their pages come from the page allocator unzeroed, and
//!   an object that spans two pages is mapped through a per-CPU buffer that is never zeroed
//!   either. So a [`NewObject`] has no read method. [`NewObject::write`] copies the caller's bytes
//!   and zeroes the rest of the object up to the capacity of its size class
//!   ([`Handle::capacity`]), and reads are limited to that capacity: every byte a [`ReadGuard`]
//!   shows has been written.
//! - zsmalloc maps an object through a per-CPU area shared by all pools, with preemption disabled
//!   until the unmap. A guard therefore borrows its handle (it cannot outlive it), is `!Send`
//!   (it cannot move to another CPU), and the code that holds it runs in atomic context: it must
//!   not sleep. That is a precondition the types do not enforce, as for every guard that
//!   disables preemption (a spinlock's, RCU's): a thread that sleeps while mapped can migrate,
//!   and another mapping on the old CPU would then overwrite the per-CPU area the guard's slice
//!   points into. It is caught at run time, not compile time: with `CONFIG_DEBUG_ATOMIC_SLEEP`
//!   every sleeping function's `might_sleep()` reports it. Only one object can be mapped per CPU: a
//!   second map on the same CPU while a guard is alive returns
//!   [`EBUSY`](crate::error::code::EBUSY) instead of overwriting the first mapping, and so does
//!   mapping from interrupt context, which zsmalloc forbids.
//! - A guard's slice has the length the caller asks for, which is checked against the capacity of
//!   the object's size class, so no access can reach past the object.
//!
//! What this says does not compile is checked by `tests/compile_fail/fail_zsmalloc_*.rs` (the
//! kernel's doctests cannot be `compile_fail`).
//!
//! # Context
//!
//! zsmalloc takes its class locks without disabling interrupts, and its deferred-free queue is a
//! per-CPU buffer guarded by disabled preemption only. Every operation of this module is
//! therefore for task context: it may run with preemption disabled or under a spinlock (atomic
//! context) unless it says that it sleeps, but never from interrupt context (hardirq, softirq, or
//! with bottom halves disabled). [`Deferred::push`] and the mappings check this and refuse;
//! the others cannot (an allocation or a free from interrupt context can deadlock on a class
//! lock). While a [`ReadGuard`] is alive, the thread must not allocate or free objects of the
//! same pool nor ask for a class index: those take locks that compaction holds while it waits for
//! the mapping to end.
//!
//! The mappings disable preemption and, on `PREEMPT_RT`, zsmalloc's mapping path takes locks that
//! sleep there: this module is not built on `PREEMPT_RT` (`lib.rs`), so that no safe caller can
//! sleep in atomic context through it.
//!
//! C header: [`include/linux/zsmalloc.h`](srctree/include/linux/zsmalloc.h)

mod deferred;
mod handle;
mod mapping;
mod pool;
mod table;

#[cfg(CONFIG_RUST_ZSMALLOC_BENCH)]
mod bench;
#[cfg(CONFIG_RUST_ZSMALLOC_KUNIT_TEST)]
mod tests;

use handle::{class_index_raw, Object};
use mapping::{map_read_raw, map_read_raw_preempt_off, Mapping, MODE_WRITE};

pub use deferred::{Deferred, DeferredFree, DeferredOptions, DeferredStats, Pushed};
pub use handle::{Handle, NewObject};
pub use mapping::ReadGuard;
pub use pool::{Pool, Stats, MAX_ALLOC_SIZE};
pub use table::{Contents, Slot, SlotGuard, Table};
