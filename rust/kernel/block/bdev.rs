// SPDX-License-Identifier: GPL-2.0

//! Block devices that a driver opens itself: an exclusive open by path, synchronous page reads
//! and batched asynchronous page writes.
//!
//! A stacking driver (zram's backing device is the model) opens another block device by path
//! with [`BdevFile::open`], as `filp_open()` with `O_RDWR | O_EXCL` does, reads pages from it with
//! [`BdevFile::read_page`] and writes pages to it through a [`WriteQueue`], which keeps many
//! writes in flight and hands back each completion with the caller's tag. The open returns a
//! [`BdevClaim`], the device's exclusive claim, which the driver keeps while the device is
//! configured and drops to give the device up at once (zram's `reset` closes its backing device
//! before it returns); the references it hands out for I/O keep the file open, not the claim.
//!
//! No page of this module is ever reached through a Rust reference: a page a bio is using may be
//! written by the device at any time, so data moves in and out only by copies, and only while no
//! bio uses the page.
//!
//! # Context
//!
//! Everything here may sleep: call it from process context, never under a spinlock or in an RCU
//! read-side section (each function starts with `might_sleep()`, so a wrong context is reported
//! at once). A completed write is on the device, not necessarily durable: no flush or FUA is
//! sent.
//!
//! C headers: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h),
//! [`include/linux/bio.h`](srctree/include/linux/bio.h)

use crate::{
    alloc::Flags,
    bindings, c_str,
    error::{code::*, from_err_ptr, Error, Result},
    page::{Page, PAGE_SHIFT, PAGE_SIZE},
    prelude::*,
    str::CStr,
    sync::Arc,
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::{
    ffi::c_int,
    mem::ManuallyDrop,
    ptr::{self, NonNull},
    sync::atomic::{AtomicI32, Ordering},
};

/// Sectors (512 bytes) per page.
const SECTORS_PER_PAGE: u64 = (PAGE_SIZE / 512) as u64;

/// A block device opened for reading and writing by path, exclusively while its [`BdevClaim`]
/// lives.
///
/// Always reached through an [`ARef`] or its claim: each reference holds the file, and the device
/// is closed when the last one goes, which may be in interrupt context (the last reference of a
/// [`WriteQueue`] goes with its last completion): `fput()` defers the close to process context
/// itself. The exclusive claim goes with the [`BdevClaim`], at once.
///
/// # Invariants
///
/// The `struct file` is a block device opened with `O_RDWR | O_LARGEFILE | O_EXCL`, exclusive
/// while its [`BdevClaim`] lives, whose reference count is not zero while a reference to this
/// object exists.
#[repr(transparent)]
pub struct BdevFile(Opaque<bindings::file>);

// SAFETY: the file is reference counted; its block device may be used from any thread.
unsafe impl Send for BdevFile {}
// SAFETY: every method takes `&self` and the C functions they call synchronise themselves.
unsafe impl Sync for BdevFile {}

// SAFETY: `get_file()` and `fput()` keep the file alive while its count is not zero.
unsafe impl AlwaysRefCounted for BdevFile {
    fn inc_ref(&self) {
        // SAFETY: the file is alive (type invariant), so its count is not zero.
        unsafe { bindings::get_file(self.0.get()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller gives up a reference it holds; `fput()` works in any context.
        unsafe { bindings::fput(obj.cast().as_ptr()) };
    }
}

impl BdevFile {
    /// Opens the block device at `path` for reading and writing, exclusively (`O_EXCL`: the file
    /// is the holder), as `filp_open()` with `O_RDWR | O_LARGEFILE | O_EXCL`: an error of
    /// `filp_open()` as it is (`ENOENT`, `EBUSY` if another holder has the device, ...),
    /// `ENOTBLK` for a file that is not a block device. As with `filp_open()`, another kind of
    /// file is opened before it is refused (and closed).
    ///
    /// The claim is released when the returned [`BdevClaim`] is dropped, at once; the device is
    /// closed when the last reference to the file goes, by `fput()`: on return to user space, or
    /// by a worker for a kernel thread or in interrupt context.
    pub fn open(path: &CStr) -> Result<BdevClaim> {
        might_sleep();
        let flags = bindings::O_RDWR | bindings::O_LARGEFILE | bindings::O_EXCL;
        // SAFETY: `path` is a NUL-terminated string; `filp_open()` may sleep, as may our caller.
        let f =
            from_err_ptr(unsafe { bindings::filp_open(path.as_char_ptr(), flags as c_int, 0) })?;
        // SAFETY: `filp_open()` returned an open file (never null), whose mapping's host is the
        // inode of its data: for a block device opened through its special file, the block
        // device's own inode, on the block devices' superblock, which `file_bdev()` requires.
        let (mode, bdev_sb) = unsafe {
            let host = (*(*f).f_mapping).host;
            (
                u32::from((*host).i_mode),
                (*host).i_sb == bindings::blockdev_superblock,
            )
        };
        if mode & bindings::S_IFMT != bindings::S_IFBLK || !bdev_sb {
            // SAFETY: the file is ours and used nowhere else.
            unsafe { bindings::filp_close(f, ptr::null_mut()) };
            return Err(ENOTBLK);
        }
        // SAFETY: `filp_open()` never returns null. INVARIANT: a block device opened with those
        // flags, whose only reference, the holder's, moves into the claim.
        let file = unsafe { ARef::from_raw(NonNull::new_unchecked(f.cast())) };
        Ok(BdevClaim {
            file: ManuallyDrop::new(file),
        })
    }

    fn as_ptr(&self) -> *mut bindings::file {
        self.0.get()
    }

    fn bdev(&self) -> *mut bindings::block_device {
        // SAFETY: the file is an open block device (type invariant).
        unsafe { bindings::file_bdev(self.as_ptr()) }
    }

    /// Returns the size of the device in pages of `PAGE_SIZE` (rounded down), as of now.
    pub fn nr_pages(&self) -> u64 {
        // SAFETY: the block device stays valid while its file is open (type invariant).
        let bytes = unsafe { bindings::bdev_nr_bytes(self.bdev()) };
        u64::try_from(bytes).unwrap_or(0) >> PAGE_SHIFT
    }

    /// Writes the path of the opened file into `buf` (as `file_path()`: the path it was opened
    /// by, resolved against the caller's root, with " (deleted)" if it was removed since) and
    /// returns it, without its NUL; `ENAMETOOLONG` if `buf` is too short.
    pub fn path<'b>(&self, buf: &'b mut [u8]) -> Result<&'b [u8]> {
        let len = c_int::try_from(buf.len()).map_err(|_| EINVAL)?;
        // SAFETY: the file is open (type invariant); `buf` is valid for `len` bytes, which
        // `file_path()` writes from the end, NUL-terminated, returning where the path starts.
        let p = from_err_ptr(unsafe {
            bindings::file_path(self.as_ptr(), buf.as_mut_ptr().cast(), len)
        })?;
        let start = (p as usize).wrapping_sub(buf.as_ptr() as usize);
        let tail = buf.get(start..).ok_or(EINVAL)?;
        let n = tail.iter().position(|&b| b == 0).ok_or(EINVAL)?;
        Ok(&tail[..n])
    }

    /// Reads page `index` of the device into `dst` (its first `dst.len()` bytes, at most a page),
    /// waiting for the read. `EINVAL` for an index beyond the device or a `dst` longer than a
    /// page, the read's error otherwise.
    ///
    /// Works from a driver's `submit_bio()` as well: there, a bio submitted to another device is
    /// only queued until `submit_bio()` returns, so the read is submitted and waited for by a
    /// worker of `system_unbound_wq`. That workqueue has no rescuer: under memory pressure the
    /// read waits for a worker to be created (zram's reads of its backing device do the same).
    pub fn read_page(&self, index: u64, dst: &mut [u8]) -> Result {
        might_sleep();
        if index >= self.nr_pages() || dst.len() > PAGE_SIZE {
            return Err(EINVAL);
        }
        let sector = index.checked_mul(SECTORS_PER_PAGE).ok_or(EINVAL)?;
        let page = Page::alloc_page(GFP_NOIO)?;
        // The bio is on the stack, as its vector: nothing is allocated from a bio set that the
        // bio being served (when called from `submit_bio()`) may hold.
        let mut sb = SyncBio {
            work: Opaque::uninit(),
            bio: Opaque::uninit(),
            bvec: Opaque::uninit(),
            err: 0,
        };
        let p = ptr::addr_of_mut!(sb);
        // SAFETY: `sb` stays in place until this function returns; the bio is initialised with
        // its one vector, used by `submit_and_wait()` alone, and uninitialised after it
        // completed. The page stays allocated until then. The device is open (type invariant).
        unsafe {
            let bio = Opaque::raw_get(ptr::addr_of!((*p).bio));
            bindings::bio_init(
                bio,
                self.bdev(),
                Opaque::raw_get(ptr::addr_of!((*p).bvec)),
                1,
                bindings::req_op_REQ_OP_READ,
            );
            (*bio).bi_iter.bi_sector = sector;
            bindings::__bio_add_page(bio, page.as_ptr(), PAGE_SIZE as u32, 0);
            submit_and_wait(p);
            bindings::bio_uninit(bio);
        }
        if sb.err != 0 {
            return Err(Error::from_errno(sb.err));
        }
        // SAFETY: the read completed, so nothing writes the page, and `dst` is valid for its
        // length, at most a page.
        unsafe { page.read_raw(dst.as_mut_ptr(), 0, dst.len()) }
    }
}

/// The exclusive claim on a block device that [`BdevFile::open`] opened: the holder's own
/// reference to the file.
///
/// It dereferences to the [`BdevFile`], and [`file`](Self::file) gives more references to it for
/// I/O, which may outlive the claim. Dropping the claim gives the device up at once, as
/// `bdev_fput()` does: the claim is yielded before the drop returns, so an exclusive open of the
/// device right after succeeds, whatever references to the file remain (they keep the file open
/// for I/O, no longer exclusive).
///
/// Context: dropped in process context; the drop sleeps (the disk's `open_mutex`).
///
/// # Invariants
///
/// `file` holds the reference `filp_open()` returned with `O_EXCL`, which only this claim's drop
/// puts, by `bdev_fput()`.
pub struct BdevClaim {
    file: ManuallyDrop<ARef<BdevFile>>,
}

impl BdevClaim {
    /// A reference to the claimed file, for I/O; it keeps the file open, not the claim.
    pub fn file(&self) -> ARef<BdevFile> {
        ARef::clone(&self.file)
    }
}

impl core::ops::Deref for BdevClaim {
    type Target = BdevFile;

    fn deref(&self) -> &BdevFile {
        &self.file
    }
}

impl Drop for BdevClaim {
    fn drop(&mut self) {
        might_sleep();
        // SAFETY: `file` is not used again: this is the claim's drop.
        let file = unsafe { ManuallyDrop::take(&mut self.file) };
        let f = ARef::into_raw(file);
        // Its other references stay valid: the claim only ends the exclusive hold. Process
        // context, as the type's contract says and `might_sleep()` checks.
        // SAFETY: `f` is the holder's reference to a block device file opened by `filp_open()`
        // (type invariant), which `bdev_fput()` yields the claim of and puts, once, here.
        unsafe { bindings::bdev_fput(f.cast().as_ptr()) };
    }
}

/// Reports a call in atomic context, as the C functions that may sleep do.
fn might_sleep() {
    // SAFETY: always safe to call.
    unsafe { bindings::might_sleep_here() };
}

/// Whether the current task is in a `submit_bio()`: bios it submits are queued until it returns.
fn in_submit_bio() -> bool {
    // SAFETY: `current` is always valid, and only its own task changes its `bio_list`.
    unsafe { !(*bindings::get_current()).bio_list.is_null() }
}

/// Allocates a bio of one page, `page`, at page `index` of `file`'s device.
///
/// # Safety
///
/// `page` stays allocated, and is neither read nor written by the CPU if `op` reads into it,
/// until the bio completes.
unsafe fn new_page_bio(
    file: &BdevFile,
    index: u64,
    page: &Page,
    op: bindings::blk_opf_t,
    flags: Flags,
) -> Result<*mut bindings::bio> {
    let sector = index.checked_mul(SECTORS_PER_PAGE).ok_or(EINVAL)?;
    // SAFETY: the device is open (type invariant of `BdevFile`); `fs_bio_set` is the kernel's
    // bio set for file systems and stacking drivers, initialised at boot.
    let bio = unsafe {
        bindings::bio_alloc_bioset(
            file.bdev(),
            1,
            op,
            flags.as_raw(),
            ptr::addr_of_mut!(bindings::fs_bio_set),
        )
    };
    if bio.is_null() {
        return Err(ENOMEM);
    }
    // SAFETY: `bio` is a new bio with room for one vector; the page stays allocated while the
    // bio uses it (the caller's promise).
    unsafe {
        (*bio).bi_iter.bi_sector = sector;
        bindings::__bio_add_page(bio, page.as_ptr(), PAGE_SIZE as u32, 0);
    }
    Ok(bio)
}

/// A bio on the stack, submitted and waited for by the task, or by a worker when the task is in a
/// `submit_bio()`.
#[repr(C)]
struct SyncBio {
    work: Opaque<bindings::work_struct>,
    bio: Opaque<bindings::bio>,
    bvec: Opaque<bindings::bio_vec>,
    err: c_int,
}

/// Submits the bio of a [`SyncBio`] and waits for it.
///
/// # Safety
///
/// Called by the workqueue for the work of a live [`SyncBio`], which nothing else touches until
/// `flush_work()` returns.
unsafe extern "C" fn sync_bio_work(work: *mut bindings::work_struct) {
    // `work` is the first field of a `SyncBio` (`repr(C)`), live and ours (see above).
    let sb = work.cast::<SyncBio>();
    // SAFETY: as above; the bio is complete and not yet submitted.
    unsafe { (*sb).err = bindings::submit_bio_wait(Opaque::raw_get(ptr::addr_of!((*sb).bio))) };
}

/// Submits the bio of `sb` and waits for it; its `err` is then 0 or a negative errno.
///
/// # Safety
///
/// `sb` is valid and stays in place until this returns; its bio is complete, not yet submitted,
/// and its pages stay allocated until this returns.
unsafe fn submit_and_wait(sb: *mut SyncBio) {
    if !in_submit_bio() {
        // SAFETY: as the caller promises.
        unsafe { (*sb).err = bindings::submit_bio_wait(Opaque::raw_get(ptr::addr_of!((*sb).bio))) };
        return;
    }
    // SAFETY: `sb` is valid (the caller's promise); this takes a field's address.
    let work = unsafe { Opaque::raw_get(ptr::addr_of!((*sb).work)) };
    // SAFETY: `work` lies in `sb`, which stays in place until this function returns, after the
    // work is flushed and destroyed below; it is initialised as an on-stack work.
    unsafe {
        bindings::init_work_with_key(
            work,
            Some(sync_bio_work),
            true,
            c_str!("bdev::sync_bio").as_char_ptr(),
            crate::static_lock_class!().as_ptr(),
        )
    };
    // SAFETY: the work is initialised and not queued; `system_unbound_wq` exists from early boot.
    // From now on the worker is the only user of `sb` until `flush_work()` returns.
    unsafe {
        bindings::queue_work_on(
            bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
            bindings::system_unbound_wq,
            work,
        )
    };
    // SAFETY: the work is queued; `flush_work()` waits for it to run (workqueues are online once
    // user space runs, before any block device can be opened by path).
    unsafe { bindings::flush_work(work) };
    // SAFETY: the work has run and is no longer queued, so it can be destroyed.
    unsafe { bindings::destroy_onstack_work(work) };
}

/// A status not yet written by the completion.
const IN_FLIGHT: i32 = i32::MIN;

/// What a [`WriteQueue`] and its bios in flight share.
///
/// # Invariants
///
/// `done` is an initialised completion, completed once by each completed write.
#[pin_data]
struct Shared {
    #[pin]
    done: Opaque<bindings::completion>,
    /// Holds the device open while bios are in flight, even if the queue is leaked.
    file: ARef<BdevFile>,
}

// SAFETY: `complete()` and `wait_for_completion()` synchronise themselves; the file is `Sync`.
unsafe impl Sync for Shared {}
// SAFETY: as above.
unsafe impl Send for Shared {}

/// One write of a [`WriteQueue`]: what its bio's completion writes.
struct Request {
    shared: Arc<Shared>,
    /// `IN_FLIGHT`, then 0 or the negative errno of the write.
    status: AtomicI32,
}

/// A [`WriteQueue`]'s page for one write, with its request and the caller's tag.
///
/// # Invariants
///
/// While `tag` is `Some`, a bio that writes `page` is in flight or completed, with a reference
/// to `req` as its private data; `page` is not touched until the write is reaped.
struct Entry<T> {
    page: Page,
    req: Arc<Request>,
    tag: Option<T>,
}

/// The result of one write of a [`WriteQueue`]: the caller's tag and the write's result.
pub struct Completed<T> {
    /// The tag given to [`WriteQueue::submit`].
    pub tag: T,
    /// The write's result: `Ok` or the block layer's error.
    pub result: Result,
}

/// Asynchronous page writes to a [`BdevFile`].
///
/// [`submit`](Self::submit) copies the data into a page of the queue's own and submits its write
/// without waiting for it; [`wait_one`](Self::wait_one) waits until a write completes and returns
/// it, with the tag given at submission. The caller bounds the writes in flight
/// ([`in_flight`](Self::in_flight)); the queue keeps one page per write in flight and reuses it.
///
/// Dropping the queue waits for the writes still in flight. A leaked queue leaks its pages: a
/// completion never touches memory that has been freed, since each bio holds its request, and
/// each request the device.
///
/// Not for use in a driver's `submit_bio()`: a bio submitted there waits until it returns, so
/// [`submit`](Self::submit) fails with `EAGAIN` there.
///
/// # Invariants
///
/// - `in_flight` is the number of entries with a tag; each has a bio writing its page, in flight
///   or completed, that holds a reference to the entry's request (type invariant of `Entry`).
/// - Writes reaped by [`wait_one`](Self::wait_one) ≤ completions of `shared.done` consumed ≤
///   writes whose status is stored: each completion stores its status before it completes
///   `done`, once.
pub struct WriteQueue<T> {
    shared: Arc<Shared>,
    entries: KVec<Entry<T>>,
    in_flight: usize,
}

impl<T> WriteQueue<T> {
    /// An empty queue of writes to `file`.
    pub fn new(file: &BdevFile) -> Result<Self> {
        let shared = Arc::pin_init(
            pin_init!(Shared {
                // SAFETY: `init_completion()` initialises the completion in place.
                done <- Opaque::ffi_init(|p| unsafe { bindings::init_completion(p) }),
                file: file.into(),
            }),
            GFP_KERNEL,
        )?;
        Ok(WriteQueue {
            shared,
            entries: KVec::new(),
            in_flight: 0,
        })
    }

    /// Returns the number of writes submitted and not yet returned by
    /// [`wait_one`](Self::wait_one).
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Writes `data` (at most a page; the rest of the page is zeroes) to page `index` of the
    /// device, without waiting; `tag` comes back with its completion. `EINVAL` for an index
    /// beyond the device or data longer than a page, `ENOMEM` if a page cannot be allocated,
    /// `EAGAIN` in a `submit_bio()` (see above); the write is not submitted then.
    pub fn submit(&mut self, index: u64, data: &[u8], tag: T) -> Result {
        might_sleep();
        if in_submit_bio() {
            return Err(EAGAIN);
        }
        if index >= self.shared.file.nr_pages() || data.len() > PAGE_SIZE {
            return Err(EINVAL);
        }
        let i = match self.entries.iter().position(|e| e.tag.is_none()) {
            Some(i) => i,
            None => {
                let req = Arc::new(
                    Request {
                        shared: self.shared.clone(),
                        status: AtomicI32::new(IN_FLIGHT),
                    },
                    GFP_KERNEL,
                )?;
                let page = Page::alloc_page(GFP_KERNEL)?;
                self.entries.push(
                    Entry {
                        page,
                        req,
                        tag: None,
                    },
                    GFP_KERNEL,
                )?;
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[i];
        // SAFETY: no write uses the page (the entry has no tag, type invariant of `Entry`);
        // `data` is valid for its length, at most a page.
        unsafe {
            e.page.write_raw(data.as_ptr(), 0, data.len())?;
            e.page.fill_zero_raw(data.len(), PAGE_SIZE - data.len())?;
        }
        // A synchronous write, as zram's: somebody waits for it.
        let op = bindings::req_op_REQ_OP_WRITE | (1 << bindings::req_flag_bits___REQ_SYNC);
        // SAFETY: the page belongs to the entry, which keeps it, untouched, until the write is
        // reaped (type invariant of `Entry`, set below).
        let bio = unsafe { new_page_bio(&self.shared.file, index, &e.page, op, GFP_NOIO)? };
        e.req.status.store(IN_FLIGHT, Ordering::Relaxed);
        let private = Arc::into_raw(e.req.clone());
        // SAFETY: `bio` is ours and complete. Its private data is a reference to the request,
        // which the completion takes back; the page stays allocated and untouched until the
        // write is reaped (the entry's tag is set below, before anything else can run on it).
        unsafe {
            (*bio).bi_private = private.cast_mut().cast();
            (*bio).bi_end_io = Some(write_end_io);
            bindings::submit_bio(bio);
        }
        // INVARIANT: a bio writing the page is in flight, with a reference to `req`; it is counted
        // in `in_flight`.
        e.tag = Some(tag);
        self.in_flight += 1;
        Ok(())
    }

    /// Waits until a write completes and returns it; `None` if none is in flight.
    #[must_use]
    pub fn wait_one(&mut self) -> Option<Completed<T>> {
        might_sleep();
        if self.in_flight == 0 {
            return None;
        }
        // SAFETY: `done` is initialised (type invariant of `Shared`).
        unsafe { bindings::wait_for_completion_io(self.shared.done.get()) };
        // One more completion consumed than writes reaped (type invariant): a write has stored
        // its status and is not yet reaped, so its entry still has its tag.
        for e in self.entries.iter_mut() {
            if e.tag.is_none() {
                continue;
            }
            let status = e.req.status.load(Ordering::Acquire);
            if status == IN_FLIGHT {
                continue;
            }
            let tag = e.tag.take()?;
            // INVARIANT: the write is reaped, its entry has no tag, and one completion was
            // consumed for it.
            self.in_flight -= 1;
            let result = if status == 0 {
                Ok(())
            } else {
                Err(Error::from_errno(status))
            };
            return Some(Completed { tag, result });
        }
        None
    }
}

impl<T> Drop for WriteQueue<T> {
    fn drop(&mut self) {
        // The pages go with the entries: no bio may use them any more. `wait_one()` reaps one
        // write per call while any is in flight (type invariant).
        while self.in_flight > 0 {
            let _ = self.wait_one();
        }
    }
}

/// The completion of a [`WriteQueue`]'s write.
///
/// # Safety
///
/// Called once by the block layer for a bio of [`WriteQueue::submit`], whose private data is a
/// reference to its request.
unsafe extern "C" fn write_end_io(bio: *mut bindings::bio) {
    // SAFETY: the private data is a reference to the request, given up to us (see above).
    let req = unsafe { Arc::from_raw((*bio).bi_private.cast::<Request>()) };
    // SAFETY: the bio is complete.
    let err = unsafe { bindings::blk_status_to_errno((*bio).bi_status) };
    // SAFETY: the bio is ours to release; its page belongs to the queue's entry.
    unsafe { bindings::bio_put(bio) };
    // The queue may reap the write as soon as the status is stored; `req` keeps the shared state
    // alive until `complete()` returns.
    req.status.store(err, Ordering::Release);
    // SAFETY: `done` is initialised (type invariant of `Shared`); `complete()` works in any
    // context.
    unsafe { bindings::complete(req.shared.done.get()) };
}
