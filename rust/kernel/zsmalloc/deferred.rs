// SPDX-License-Identifier: GPL-2.0

//! The deferred free: per-CPU queues of frees handed in batches to a drain callback.

use super::*;
use crate::{
    alloc::{flags::*, KBox},
    bindings,
    error::{from_err_ptr, Result},
    ffi::c_void,
    page::PAGE_SIZE,
    sync::Arc,
};
use core::{
    marker::{PhantomData, PhantomPinned},
    pin::Pin,
};

/// The owner of a deferred-free queue: what it queues, and how it frees a batch.
///
/// The owner usually holds the [`Table`] that maps its items (slot numbers, say) to objects, and
/// frees those objects in [`drain`](Self::drain). The owner and its items are `'static`: the
/// queue's worker may run as long as the queue exists, and a queue can be leaked (with
/// [`core::mem::forget`] or a reference cycle), so the owner must not borrow anything (checked
/// by `tests/compile_fail/fail_zsmalloc_deferred_owner_borrows.rs` and
/// `tests/compile_fail/fail_zsmalloc_deferred_owner_borrows_local.rs`).
pub trait DeferredFree: Send + Sync + 'static {
    /// What is queued: typically an index into the owner's table. At most one page.
    type Item: Copy + Send + 'static;

    /// Frees the objects that `items` name.
    ///
    /// Runs on a worker of an unbound workqueue, and also in the caller of [`Deferred::push`]
    /// when the queue is full (then in the caller's context, which may be atomic, and under the
    /// caller's locks); so it can run concurrently with itself and must not sleep.
    ///
    /// It must not push to its own queue (with the queue full, each push would drain inline
    /// again, without bound), and must not drop the last reference to its own [`Deferred`]
    /// (dropping the queue waits for its worker, which is running the drain).
    fn drain(&self, items: &[Self::Item]);
}

/// A per-CPU deferred-free queue registered on a pool.
///
/// [`push`](Self::push) writes the item into this CPU's buffer page without taking a lock. The
/// push that completes the page's batch ([`DeferredOptions::batch`]) hands it to a worker that
/// calls [`DeferredFree::drain`]; with no spare page to take its place, the CPU fills the page on.
/// When the page is full and no spare page is left, the item is drained at once in the caller;
/// [`DeferredStats::sync_frees`] counts how often.
///
/// It holds a reference to its pool, so the pool outlives it; dropping it drains whatever is
/// still queued, then unregisters, then drops the owner: the drain never runs after its owner is
/// gone.
///
/// # Invariants
///
/// Once [`Deferred::new`] has returned, `raw` is a live `zs_deferred` of `pool` whose drain gets a
/// pointer to `owner`, which is pinned. Before that it may be null.
pub struct Deferred<T: DeferredFree> {
    raw: *mut bindings::zs_deferred,
    owner: T,
    pool: Arc<Pool>,
    _pin: PhantomPinned,
}

// SAFETY: the C queue may be used from any thread; `T` is `Send + Sync`.
unsafe impl<T: DeferredFree> Send for Deferred<T> {}

// SAFETY: `push`, `flush` and `stats` may be called concurrently; `T` is `Sync`.
unsafe impl<T: DeferredFree> Sync for Deferred<T> {}

/// What [`Deferred::push`] did with an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushed {
    /// Queued: a worker will hand it to the drain.
    Queued,
    /// The queue was full: the drain already ran with it, in the caller.
    Drained,
}

/// How a [`Deferred`] queues: [`Deferred::new`]'s options. The default is a full page per
/// hand-off and a bound that scales with the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeferredOptions {
    /// Items a CPU's buffer page takes before it goes to the drain; 0, or more than a page
    /// holds, is a full page.
    ///
    /// An owner whose item names many objects (a word of a bitmap of slots, say) asks for fewer,
    /// so that the drain runs while a burst of pushes goes on rather than after it. It costs no
    /// capacity: a CPU that finds no spare page when its batch is complete fills its page on.
    pub batch: usize,
    /// The bound on buffer pages, raised to one per possible CPU plus one; 0 scales it with the
    /// pool: one buffer page per 512 pool pages, and at least four per possible CPU.
    pub max_pages: usize,
}

/// Counters of a [`Deferred`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeferredStats {
    /// Items queued by [`Deferred::push`].
    pub pushed: u64,
    /// Items handed to the drain, from the queue.
    pub drained: u64,
    /// Pushes that found the queue full and drained at once.
    pub sync_frees: u64,
    /// Buffer pages held now.
    pub pages: usize,
    /// The bound on buffer pages.
    pub max_pages: usize,
    /// Items a buffer page takes before it goes to the drain, if a spare page can take its place:
    /// the batch in effect ([`DeferredOptions::batch`], a page's worth, or what debugfs set).
    pub batch: usize,
}

struct Vtable<T>(PhantomData<T>);

impl<T: DeferredFree> Vtable<T> {
    const OPS: bindings::zs_deferred_ops = bindings::zs_deferred_ops {
        drain: Some(drain_callback::<T>),
    };
}

/// # Safety
///
/// `owner` must point to a live `T` and `elems` to `nr` consecutive `T::Item`s.
unsafe extern "C" fn drain_callback<T: DeferredFree>(
    owner: *mut c_void,
    elems: *const c_void,
    nr: crate::ffi::c_uint,
) {
    // SAFETY: `owner` is the pinned owner of a live `Deferred<T>`, which outlives its C queue.
    let owner = unsafe { &*owner.cast::<T>() };
    // The queue stores items of `size_of::<T::Item>()` bytes at that stride from a page-aligned
    // address; zs_deferred_push() queues nothing from interrupt context, so no push interrupts
    // another on the same CPU.
    // SAFETY: so `elems` holds `nr` aligned `T::Item`s, each copied whole from a valid `T::Item`
    // by `push`.
    let items = unsafe { core::slice::from_raw_parts(elems.cast::<T::Item>(), nr as usize) };
    owner.drain(items);
}

impl<T: DeferredFree> Deferred<T> {
    /// Registers `owner` on `pool`, queueing as `options` say.
    ///
    /// Context: process context; sleeps.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, prelude::*, sync::Arc};
    /// use kernel::zsmalloc::{Deferred, DeferredFree, DeferredOptions, Pool};
    /// use core::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// struct Counter(AtomicUsize);
    ///
    /// impl DeferredFree for Counter {
    ///     type Item = u32;
    ///     fn drain(&self, items: &[u32]) {
    ///         self.0.fetch_add(items.len(), Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let pool = Arc::new(Pool::new(c_str!("doc"))?, GFP_KERNEL)?;
    /// // A CPU's items go to the drain 64 at a time.
    /// let options = DeferredOptions { batch: 64, ..Default::default() };
    /// let df = Deferred::new(pool, Counter(AtomicUsize::new(0)), options)?;
    /// assert_eq!(df.stats().batch, 64);
    /// for i in 0..1000 {
    ///     assert!(df.push(i).is_ok());
    /// }
    /// df.flush();
    /// assert_eq!(df.owner().0.load(Ordering::Relaxed), 1000);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(pool: Arc<Pool>, owner: T, options: DeferredOptions) -> Result<Pin<KBox<Self>>> {
        crate::build_assert!(core::mem::size_of::<T::Item>() > 0);
        crate::build_assert!(core::mem::size_of::<T::Item>() <= PAGE_SIZE);
        // A page's worth (0 for the C side) unless fewer were asked for: the conversion cannot
        // fail, since a page holds far fewer than `u32::MAX` items.
        let per_page = PAGE_SIZE / core::mem::size_of::<T::Item>();
        let batch = match options.batch {
            b if b < per_page => u32::try_from(b).unwrap_or(0),
            _ => 0,
        };
        let mut this = KBox::pin(
            Deferred {
                raw: core::ptr::null_mut(),
                owner,
                pool,
                _pin: PhantomPinned,
            },
            GFP_KERNEL,
        )?;
        // SAFETY: only `raw` is written, which is not structurally pinned; nothing moves.
        let inner = unsafe { this.as_mut().get_unchecked_mut() };
        let owner_ptr = core::ptr::from_ref(&inner.owner)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: the pool is valid; `OPS` is a static; `owner_ptr` points to the pinned owner,
        // which outlives the queue because `drop` destroys the queue first (and if the queue is
        // leaked, so is the box that holds the owner, and the owner borrows nothing). Any `batch`
        // and `max_pages` are valid: the C side limits both, and a drain gets at most the items of
        // one buffer page whatever the batch.
        let raw = unsafe {
            bindings::zs_deferred_create(
                inner.pool.raw(),
                &Vtable::<T>::OPS,
                owner_ptr,
                core::mem::size_of::<T::Item>(),
                batch,
                options.max_pages as _,
            )
        };
        // On failure `raw` stays null, which `drop` skips.
        let raw = from_err_ptr(raw)?;
        // INVARIANT: the queue was just created with `owner` as its drain's argument.
        inner.raw = raw;
        Ok(this)
    }

    /// Returns the owner.
    pub fn owner(&self) -> &T {
        &self.owner
    }

    /// Queues `item` for the drain.
    ///
    /// Returns [`Pushed::Queued`] if the item was queued, and [`Pushed::Drained`] if the queue
    /// was full and the drain ran at once, in this thread, with `item` alone. From interrupt
    /// context the queue is not touched and nothing is drained: the item comes back as the
    /// error, and the caller keeps whatever it names.
    ///
    /// Context: task context, preemption disabled or under a spinlock (atomic) allowed; does not
    /// sleep. Since the drain may run inline, the caller must not hold a lock that the drain
    /// takes. In interrupt context (hardirq, softirq, or with bottom halves disabled) it does
    /// nothing and returns the item as the error.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, prelude::*, sync::Arc};
    /// use kernel::zsmalloc::{Deferred, DeferredFree, Pool, Pushed};
    /// use core::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// struct Sum(AtomicUsize);
    ///
    /// impl DeferredFree for Sum {
    ///     type Item = usize;
    ///     fn drain(&self, items: &[usize]) {
    ///         self.0.fetch_add(items.iter().sum(), Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let pool = Arc::new(Pool::new(c_str!("doc"))?, GFP_KERNEL)?;
    /// let df = Deferred::new(pool, Sum(AtomicUsize::new(0)), Default::default())?;
    /// match df.push(5) {
    ///     Ok(Pushed::Queued) => df.flush(),
    ///     Ok(Pushed::Drained) => {}
    ///     // Only from interrupt context.
    ///     Err(_) => return Err(EBUSY),
    /// }
    /// assert_eq!(df.owner().0.load(Ordering::Relaxed), 5);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn push(&self, item: T::Item) -> core::result::Result<Pushed, T::Item> {
        // zs_deferred_push() refuses in interrupt context itself, where a push could interleave
        // with the push of the task it interrupted.
        let elem = core::ptr::from_ref(&item).cast();
        // SAFETY: `raw` is live; `elem` is `size_of::<T::Item>()` readable bytes, copied.
        let queued = unsafe { bindings::zs_deferred_push(self.raw, elem) };
        if queued {
            return Ok(Pushed::Queued);
        }
        // Refused: the queue is full, or this is interrupt context, where the drain (which
        // takes its owner's locks) must not run.
        // SAFETY: FFI call without preconditions.
        if unsafe { bindings::in_interrupt() } {
            return Err(item);
        }
        self.owner.drain(core::slice::from_ref(&item));
        Ok(Pushed::Drained)
    }

    /// Waits until every item pushed before the call has been drained.
    ///
    /// Context: process context; sleeps.
    pub fn flush(&self) {
        // SAFETY: `raw` is live.
        unsafe { bindings::zs_deferred_flush(self.raw) };
    }

    /// Returns the queue's counters.
    pub fn stats(&self) -> DeferredStats {
        let mut s = bindings::zs_deferred_stats::default();
        // SAFETY: `raw` is live and `s` is writable.
        unsafe { bindings::zs_deferred_stats(self.raw, &mut s) };
        DeferredStats {
            pushed: s.pushed,
            drained: s.drained,
            sync_frees: s.sync_frees,
            pages: s.pages,
            max_pages: s.max_pages,
            batch: s.batch as usize,
        }
    }
}

impl<T: DeferredFree> Drop for Deferred<T> {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        // SAFETY: `raw` is live and destroyed once, here. The destroy drains what is queued, then
        // stops the worker; `owner` is dropped only after this returns.
        unsafe { bindings::zs_deferred_destroy(self.raw) };
    }
}
