// SPDX-License-Identifier: GPL-2.0

//! A table of locked slots, each holding an object of the table's pool or a plain word.

use super::{class_index_raw, map_read_raw_preempt_off, Handle, Pool, ReadGuard};
use crate::{
    alloc::{flags::*, VVec},
    error::{code::*, Result},
    sync::{Arc, PackedGuard, PackedLock, PackedLockClass},
};

/// The bit of a slot's lock word that says that its word is a handle of the table's pool.
///
/// One of the 31 bits that [`PackedLock`] leaves to its user; the table's users get the 30 below
/// it.
const OBJECT: u32 = 1 << 30;

/// One slot of a [`Table`], as stored: a lock word, a machine word and 32 bits of the caller's
/// data, 16 bytes on 64-bit.
///
/// Opaque; only its size is of interest outside the table (a driver may report its metadata
/// overhead per slot).
pub struct Slot(PackedLock<SlotData>);

/// What a slot's lock protects: the caller's 32 bits and its word.
///
/// Packed to 4-byte alignment, so that the 32 bits take the space that the alignment of the word
/// would otherwise leave empty after the 32-bit lock word: the slot is the lock word at offset 0,
/// `aux` at 4 and `word` at 8 ([`PackedLock`] is `repr(C)`). The type's alignment is 4, but the
/// table's slots start at a page and are 16 bytes each on 64-bit, so `word` is naturally
/// aligned there. Its fields are only copied in and out, never borrowed.
#[repr(C, packed(4))]
struct SlotData {
    aux: u32,
    word: usize,
}

#[cfg(CONFIG_64BIT)]
crate::static_assert!(core::mem::size_of::<Slot>() == 16);
crate::static_assert!(core::mem::offset_of!(SlotData, word) == 4);
// The data follows the 4-byte lock word with no padding, on every architecture.
crate::static_assert!(core::mem::size_of::<Slot>() == 4 + core::mem::size_of::<SlotData>());

/// What a slot holds.
pub enum Contents<'a> {
    /// A plain word: no object (zram stores a page that repeats one word as that word). A new
    /// slot holds the word 0.
    Word(usize),
    /// An object of the table's pool.
    Object(Handle<'a>),
}

/// A table of slots that each hold an object of the table's pool, or a plain word, under a lock
/// of their own, with 30 bits of the caller's state in the lock word and 32 more next to it.
///
/// This is how a driver keeps its objects next to its pool (a block device's page table): the
/// table owns the pool through an [`Arc`], and a slot stores the object as a bare C handle, so a
/// slot takes 16 bytes on 64-bit, its lock included. Objects go in and out as [`Handle`]s of the
/// table's pool, through a [`SlotGuard`]; dropping the table frees every object still in it,
/// before it releases its reference to the pool. Context of the drop: process context; may
/// sleep (the slots are freed with `vfree()`).
///
/// The slots are allocated with `vmalloc()`, so their number is limited by memory only. Lockdep
/// sees the slot locks of all tables as one lock class, `zsmalloc_table`: holding two slot locks
/// at once is reported.
///
/// # Invariants
///
/// For every unlocked slot, if `OBJECT` (bit 30) is set in its lock word, its word is the C
/// handle of a live object of `pool` whose first capacity bytes have been written (a [`Handle`]'s
/// invariants), owned by the slot; if not, its word is a plain word. For a locked slot the same
/// holds of its word and the bits its [`SlotGuard`] will publish. A slot whose guard was leaked
/// stays locked.
///
/// # Examples
///
/// ```
/// use kernel::{c_str, sync::Arc, zsmalloc::{Contents, Pool, Table}};
///
/// let pool = Arc::new(Pool::new(c_str!("doc"))?, GFP_KERNEL)?;
/// let table = Table::new(pool.clone(), 4)?;
/// let h = table.pool().alloc(5, GFP_KERNEL)?.write(b"hello")?;
/// {
///     let mut slot = table.lock(1).ok_or(EINVAL)?;
///     assert_eq!(slot.index(), 1);
///     slot.replace(Contents::Object(h))?;
///     slot.set_bits(5);
///     slot.set_aux(0xdead_beef);
///     assert_eq!(&*slot.map_read(5)?, b"hello");
/// }
/// assert_eq!(table.lock(1).ok_or(EINVAL)?.aux(), 0xdead_beef);
/// assert_eq!(table.bits(1), Some(5));
/// assert_eq!(table.lock(0).ok_or(EINVAL)?.word(), Some(0));
/// assert!(table.lock(4).is_none());
/// assert_eq!(pool.live_objects(), 1);
/// drop(table);
/// assert_eq!(pool.live_objects(), 0);
/// # Ok::<(), Error>(())
/// ```
pub struct Table {
    pool: Arc<Pool>,
    /// The lockdep class of the slot locks.
    class: &'static PackedLockClass,
    slots: VVec<Slot>,
}

impl Table {
    /// The largest value of a slot's caller bits: they are 30 bits wide.
    pub const MAX_BITS: u32 = OBJECT - 1;

    /// Returns how many bytes the slots of a table of `slots` slots take.
    ///
    /// Fails with [`ENOMEM`] if the size overflows or exceeds `isize::MAX`. There is no other
    /// limit (in particular not `kvmalloc()`'s `INT_MAX`): [`Table::new`] allocates with
    /// `vmalloc()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::zsmalloc::{Slot, Table};
    ///
    /// assert_eq!(Table::bytes_for(10), Ok(10 * core::mem::size_of::<Slot>()));
    /// assert_eq!(Table::bytes_for(usize::MAX).err(), Some(ENOMEM));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn bytes_for(slots: usize) -> Result<usize> {
        slots
            .checked_mul(core::mem::size_of::<Slot>())
            .filter(|&bytes| bytes <= isize::MAX as usize)
            .ok_or(ENOMEM)
    }

    /// Creates a table of `slots` slots on `pool`, each holding the word 0 with the caller bits 0.
    ///
    /// Fails with [`ENOMEM`] if memory is short or the table would be too large (see
    /// [`bytes_for`](Self::bytes_for)); a failed allocation does not warn, since the size usually
    /// comes from user space.
    ///
    /// Context: process context; sleeps.
    pub fn new(pool: Arc<Pool>, slots: usize) -> Result<Self> {
        Self::bytes_for(slots)?;
        let class = crate::new_packed_lock_class!("zsmalloc_table");
        let flags = GFP_KERNEL | __GFP_NOWARN;
        let mut v = VVec::with_capacity(slots, flags)?;
        for _ in 0..slots {
            // Within the capacity: does not allocate.
            v.push(
                Slot(PackedLock::new(0, SlotData { aux: 0, word: 0 })),
                flags,
            )?;
        }
        // INVARIANT: no slot has `OBJECT` set.
        Ok(Table {
            pool,
            class,
            slots: v,
        })
    }

    /// Returns the table's pool.
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Returns the number of slots.
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Returns whether the table has no slots.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Locks slot `i`, spinning while another thread holds it; `None` if `i` is out of range.
    ///
    /// The guard disables preemption until it is dropped: the thread must not sleep meanwhile.
    ///
    /// Context: task context, never interrupt context.
    #[inline]
    pub fn lock(&self, i: usize) -> Option<SlotGuard<'_>> {
        let guard = self.slots.get(i)?.0.lock(self.class);
        Some(SlotGuard {
            table: self,
            guard,
            index: i,
        })
    }

    /// Locks slot `i` if nobody holds it.
    ///
    /// Fails with [`EINVAL`] if `i` is out of range and with [`EBUSY`] if the slot is locked.
    ///
    /// Context: task context, never interrupt context (lockdep tracks the lock); does not sleep or
    /// spin.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, sync::Arc, zsmalloc::{Pool, Table}};
    ///
    /// let table = Table::new(Arc::new(Pool::new(c_str!("doc"))?, GFP_KERNEL)?, 2)?;
    /// let held = table.try_lock(0)?;
    /// assert_eq!(table.try_lock(0).err(), Some(EBUSY));
    /// assert_eq!(table.try_lock(2).err(), Some(EINVAL));
    /// drop(held);
    /// assert!(table.try_lock(0).is_ok());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn try_lock(&self, i: usize) -> Result<SlotGuard<'_>> {
        let slot = self.slots.get(i).ok_or(EINVAL)?;
        let guard = slot.0.try_lock(self.class).ok_or(EBUSY)?;
        Ok(SlotGuard {
            table: self,
            guard,
            index: i,
        })
    }

    /// Returns a snapshot of the caller bits of slot `i`, which a holder of its lock may change
    /// at any time; `None` if `i` is out of range.
    #[inline]
    pub fn bits(&self, i: usize) -> Option<u32> {
        Some(self.slots.get(i)?.0.bits() & Self::MAX_BITS)
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        // Free every object before the reference to the pool goes with the fields.
        let pool: &Pool = &self.pool;
        let handles = self.slots.iter_mut().filter_map(|slot| {
            // With `&mut self` no guard is alive: a locked slot had its guard leaked, and its
            // lock word may not match its word. Its object, if any, is leaked too.
            if slot.0.is_locked() || slot.0.bits() & OBJECT == 0 {
                return None;
            }
            let word = slot.0.get_mut().word;
            // SAFETY: the slot is unlocked, so by the type invariant the tag says that `word` is
            // a live, written object of `pool` owned by the slot; the table is being dropped, so
            // the slot is never read again and this takes the ownership once.
            unsafe { Handle::from_raw(word, pool) }
        });
        pool.free_bulk(handles);
    }
}

/// A locked slot of a [`Table`]; unlocks on drop.
///
/// It gives access to the slot's contents, to its 30 caller bits and to its 32-bit caller value
/// ([`aux`](Self::aux)), which are published when the guard is dropped. Preemption is disabled
/// while it lives, so the thread must not sleep. It is `!Send` and `!Sync` (checked by
/// `tests/compile_fail/fail_zsmalloc_slot_guard_send.rs` and `fail_zsmalloc_slot_guard_sync.rs`):
/// [`map_read`](Self::map_read) relies on running on the thread whose lock disabled preemption.
pub struct SlotGuard<'t> {
    table: &'t Table,
    guard: PackedGuard<'t, SlotData>,
    index: usize,
}

impl<'t> SlotGuard<'t> {
    /// Returns the index of the slot in its table.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// Returns the caller bits (30 bits), as they will be when the lock is released.
    #[inline]
    pub fn bits(&self) -> u32 {
        self.guard.bits() & Table::MAX_BITS
    }

    /// Sets the caller bits, masked to 30 bits; they are stored when the lock is released.
    #[inline]
    pub fn set_bits(&mut self, bits: u32) {
        let tag = self.guard.bits() & OBJECT;
        self.guard.set_bits((bits & Table::MAX_BITS) | tag);
    }

    /// Returns the caller's 32-bit value (0 in a new slot), as it will be when the lock is
    /// released. A driver keeps per-slot data here that does not fit the caller bits, such as an
    /// access time; on 64-bit it takes no extra space.
    #[inline]
    pub fn aux(&self) -> u32 {
        self.guard.aux
    }

    /// Sets the caller's 32-bit value; it is stored when the lock is released. Emptying or
    /// refilling the slot leaves it as it is.
    #[inline]
    pub fn set_aux(&mut self, aux: u32) {
        self.guard.aux = aux;
    }

    /// Returns whether the slot holds an object.
    #[inline]
    pub fn has_object(&self) -> bool {
        self.guard.bits() & OBJECT != 0
    }

    /// Returns the word the slot holds, or `None` if it holds an object.
    #[inline]
    pub fn word(&self) -> Option<usize> {
        if self.has_object() {
            None
        } else {
            Some(self.guard.word)
        }
    }

    /// Returns the C handle of the slot's object, if it holds one.
    #[inline]
    fn raw(&self) -> Option<usize> {
        if self.has_object() {
            Some(self.guard.word)
        } else {
            None
        }
    }

    /// Returns the index of the size class of the slot's object; `None` if it holds a word.
    ///
    /// Context: as [`Handle::class_index`].
    #[inline]
    pub fn class_index(&self) -> Option<u32> {
        let raw = self.raw()?;
        // SAFETY: by the table's invariant `raw` is a live object of the table's pool, which
        // stays in the slot while `self` is borrowed.
        Some(unsafe { class_index_raw(&self.table.pool, raw) })
    }

    /// Maps the first `len` bytes of the slot's object for reading.
    ///
    /// Fails with [`EINVAL`] if the slot holds a word; otherwise as [`Handle::map_read`]. The
    /// guard borrows `self`, so the object stays in the slot while it is mapped.
    #[inline]
    pub fn map_read(&self, len: usize) -> Result<ReadGuard<'_>> {
        let raw = self.raw().ok_or(EINVAL)?;
        // SAFETY: `raw` is a live, written object of the pool (table invariant) that only
        // `replace`/`take` remove, with `&mut self`, which the guard's borrow excludes; the slot
        // lock, held for the whole call, keeps preemption disabled (`PackedGuard`'s invariant).
        unsafe { map_read_raw_preempt_off(&self.table.pool, raw, len) }
    }

    /// Puts `new` in the slot and returns what it held. The caller bits are left as they are.
    ///
    /// Fails with [`EINVAL`] if `new` is an object of another pool than the table's; then the
    /// slot is left unchanged and that object is freed (into its own pool).
    ///
    /// Context: task context, never interrupt context (a refused object is freed); does not
    /// sleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, sync::Arc, zsmalloc::{Contents, Pool, Table}};
    ///
    /// let table = Table::new(Arc::new(Pool::new(c_str!("doc"))?, GFP_KERNEL)?, 1)?;
    /// let other = Pool::new(c_str!("doc2"))?;
    /// // Allocate before locking: the slot lock disables preemption.
    /// let theirs = other.alloc(10, GFP_KERNEL)?.write(b"x")?;
    /// let mut slot = table.lock(0).ok_or(EINVAL)?;
    /// assert!(matches!(slot.replace(Contents::Word(7))?, Contents::Word(0)));
    /// assert_eq!(slot.replace(Contents::Object(theirs)).err(), Some(EINVAL));
    /// assert_eq!(slot.word(), Some(7));
    /// assert_eq!(other.live_objects(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn replace(&mut self, new: Contents<'t>) -> Result<Contents<'t>> {
        let (word, tag) = match new {
            Contents::Word(w) => (w, 0),
            Contents::Object(h) => {
                // A live pool is identified by its address: `h` borrows its pool, and the table
                // holds a reference to its own, so both are alive and distinct unless equal.
                if !core::ptr::eq(h.pool(), &*self.table.pool) {
                    // `h` is dropped here, which frees it into its own pool.
                    return Err(EINVAL);
                }
                (h.into_raw(), OBJECT)
            }
        };
        let old = self.take_contents();
        self.guard.word = word;
        let bits = self.guard.bits();
        // INVARIANT: the tag is set exactly when `word` is an object of the table's pool (checked
        // above), written (a `Handle`'s invariant) and now owned by the slot.
        self.guard.set_bits((bits & !OBJECT) | tag);
        Ok(old)
    }

    /// Takes the slot's object out, if it holds one. The slot then holds the word 0 (whatever it
    /// held); the caller bits are left as they are.
    ///
    /// The handle borrows the table, so it cannot outlive it (checked by
    /// `tests/compile_fail/fail_zsmalloc_table_handle_outlives_table.rs`).
    #[inline]
    pub fn take(&mut self) -> Option<Handle<'t>> {
        match self.take_contents() {
            Contents::Object(h) => Some(h),
            Contents::Word(_) => None,
        }
    }

    /// Empties the slot, leaving the word 0, and returns what it held.
    fn take_contents(&mut self) -> Contents<'t> {
        let table: &'t Table = self.table;
        let word = self.guard.word;
        self.guard.word = 0;
        let bits = self.guard.bits();
        // INVARIANT: the slot holds the plain word 0.
        self.guard.set_bits(bits & !OBJECT);
        if bits & OBJECT == 0 {
            return Contents::Word(word);
        }
        // SAFETY: the tag said that `word` is a live, written object of the table's pool owned
        // by the slot (the table's invariant); the tag is now cleared, so the ownership moves to
        // the result, once. The table, and so its pool, outlives `'t`.
        match unsafe { Handle::from_raw(word, &table.pool) } {
            Some(h) => Contents::Object(h),
            // Not reached: a handle is never 0.
            None => Contents::Word(0),
        }
    }
}
