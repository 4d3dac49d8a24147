// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of a bio-based disk's lifetime and attributes. Built with rzram's tests, this
//! abstraction's only user.

#[macros::kunit_tests(rust_block_bio)]
mod cases {
    use crate::{
        alloc::flags::*,
        bindings,
        block::{bio::*, major::Major, GenDiskBuilder},
        c_str,
        error::Result,
        sync::Arc,
        sysfs::{Attribute, SysfsBuf},
    };
    use core::sync::atomic::{AtomicUsize, Ordering};

    // SAFETY: a null module is what a built-in driver's `THIS_MODULE` holds.
    static BUILT_IN: crate::ThisModule =
        unsafe { crate::ThisModule::from_ptr(core::ptr::null_mut()) };

    /// How many `Null`s were dropped.
    static DROPS: AtomicUsize = AtomicUsize::new(0);

    /// A disk that completes every bio at once.
    struct Null;

    impl Drop for Null {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[macros::vtable]
    impl Operations for Null {
        const OWNER: &'static crate::ThisModule = &BUILT_IN;

        fn submit_bio(&self, bio: Bio) {
            bio.end(Ok(()));
        }
    }

    fn show(_: &Null, _: &Disk, _: &mut SysfsBuf<'_>) -> Result {
        Ok(())
    }

    static ATTRS: [Attribute<GenDisk<Null>>; 2] = [
        Attribute::ro(c_str!("first"), show),
        Attribute::ro(c_str!("second"), show),
    ];

    fn builder(major: &Major) -> Result<GenDiskBuilder> {
        GenDiskBuilder::new()
            .io_min(4096)?
            .io_opt(4096)?
            .synchronous(true)
            .capacity_sectors(8)
            .devt(major, 0)
    }

    /// The builder refuses what the block layer cannot take.
    #[test]
    fn builder_validates() {
        assert!(GenDiskBuilder::new().logical_block_size(1000).is_err());
        assert!(GenDiskBuilder::new().io_min(1000).is_err());
        assert!(GenDiskBuilder::new().io_opt(513).is_err());
        assert!(GenDiskBuilder::new().io_opt(0).is_ok());
    }

    /// The block core may hold a disk after the driver removes it (an `open()` that failed with
    /// `EBUSY` and has not yet put its reference, swap): the disk's operations and its driver
    /// state must outlive every reference. Before the fix, the last `put_device()` read
    /// `fops->free_disk` from freed memory (a KASAN report) and `T` was dropped while the disk
    /// was still referenced.
    #[test]
    fn disk_outlives_gendisk() -> Result {
        let major = Major::register(c_str!("rust_bio_kunit"))?;
        let disk = builder(&major)?.build_bio(
            format_args!("rust_bio_kunit0"),
            Arc::new(Null, GFP_KERNEL)?,
            &ATTRS,
        )?;
        let before = DROPS.load(Ordering::Relaxed);
        // SAFETY: the disk is valid; `part0`'s device is the disk's device, whose reference is
        // taken here as `blkdev_get_no_open()` does, and put below.
        let dev = unsafe { core::ptr::addr_of_mut!((*(*disk.raw()).part0).bd_device) };
        // SAFETY: `dev` is a valid, registered device.
        unsafe { bindings::get_device(dev) };
        drop(disk);
        // Removed, but referenced: the driver state is still there.
        assert_eq!(DROPS.load(Ordering::Relaxed), before);
        // SAFETY: puts the reference taken above; the last one releases the disk, which calls
        // `fops->free_disk`.
        unsafe { bindings::put_device(dev) };
        assert_eq!(DROPS.load(Ordering::Relaxed), before + 1);
        Ok(())
    }

    /// A disk whose operations claim another module than the one their code is in.
    struct WrongOwner;

    // SAFETY: a dangling module pointer, never dereferenced: `build_bio` only compares it (and
    // must refuse it, as these operations are built-in code).
    static NOT_US: crate::ThisModule =
        unsafe { crate::ThisModule::from_ptr(core::ptr::NonNull::dangling().as_ptr()) };

    #[macros::vtable]
    impl Operations for WrongOwner {
        const OWNER: &'static crate::ThisModule = &NOT_US;

        fn submit_bio(&self, bio: Bio) {
            bio.end(Ok(()));
        }
    }

    static NO_ATTRS: [Attribute<GenDisk<WrongOwner>>; 0] = [];

    /// The owner of the operations must be the module their code is in: otherwise an open
    /// disk would pin the wrong module (or none), and a module could go while its disk is used.
    #[test]
    fn wrong_owner_is_refused() -> Result {
        let major = Major::register(c_str!("rust_bio_kunit"))?;
        let r = builder(&major)?.build_bio(
            format_args!("rust_bio_kunit1"),
            Arc::new(WrongOwner, GFP_KERNEL)?,
            &NO_ATTRS,
        );
        assert_eq!(r.err(), Some(crate::error::code::EINVAL));
        Ok(())
    }

    /// Each attribute has a lockdep class of its own.
    #[test]
    fn one_lock_class_per_attribute() {
        assert!(
            ATTRS[0].lock_class_key() != ATTRS[1].lock_class_key()
                || cfg!(not(CONFIG_DEBUG_LOCK_ALLOC))
        );
        if cfg!(CONFIG_DEBUG_LOCK_ALLOC) {
            assert!(ATTRS[0].lock_class_key() != 0);
        }
    }
}
