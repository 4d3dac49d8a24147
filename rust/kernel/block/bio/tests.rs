// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of a bio-based disk's lifetime, partitions, owner check and attributes. Built with
//! `CONFIG_RUST_BLOCK_BIO_KUNIT_TEST`.

#[macros::kunit_tests(rust_block_bio)]
mod cases {
    use crate::{
        alloc::flags::*,
        bindings,
        block::{
            bio::{gen_disk::is_owner, operations::Vtable, *},
            major::Major,
            GenDiskBuilder,
        },
        c_str,
        error::Result,
        sync::Arc,
        sysfs::{Attribute, SysfsBuf},
    };
    use core::sync::atomic::{AtomicUsize, Ordering};

    // SAFETY: this code is in the kernel crate, which is always built in, and built-in code's
    // `THIS_MODULE` is null (`include/linux/init.h`): null is the right `THIS_MODULE` here.
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
        crate::kunit_expect_eq!(DROPS.load(Ordering::Relaxed), before);
        // SAFETY: puts the reference taken above; the last one releases the disk, which calls
        // `fops->free_disk`.
        unsafe { bindings::put_device(dev) };
        assert_eq!(DROPS.load(Ordering::Relaxed), before + 1);
        Ok(())
    }

    /// A bio-based disk never has partitions, even without `devt()`: swap's slot in
    /// `Operations::swap_slot_free_notify` counts from the start of the block device swap is on,
    /// which must then be the whole disk. Before the fix, a disk with a dynamic number could be
    /// partitioned and a driver would free the wrong pages.
    #[test]
    fn never_partitioned() -> Result {
        let major = Major::register(c_str!("rust_bio_kunit"))?;
        let fixed = builder(&major)?.build_bio(
            format_args!("rust_bio_kunit1"),
            Arc::new(Null, GFP_KERNEL)?,
            &ATTRS,
        )?;
        let dynamic = GenDiskBuilder::new().capacity_sectors(8).build_bio(
            format_args!("rust_bio_kunit2"),
            Arc::new(Null, GFP_KERNEL)?,
            &ATTRS,
        )?;
        for disk in [&fixed, &dynamic] {
            // SAFETY: the disk is valid while its `GenDisk` lives (type invariant), and nothing
            // writes its `flags` once it is added, so this read races with no write.
            let flags = unsafe { (*disk.raw()).flags };
            assert!((flags & bindings::GENHD_FL_NO_PART as i32) != 0);
        }
        Ok(())
    }

    /// The owner of the operations must be the module their code is in: otherwise an open
    /// disk would pin the wrong module (or none), and a module could go while its disk is used.
    /// `build_bio` refuses an `Operations::OWNER` that `is_owner` rejects.
    #[test]
    fn owner_is_the_operations_module() {
        // The operations of `Null` are built-in code, as all of the kernel crate.
        assert!(is_owner(&Vtable::<Null>::FOPS, core::ptr::null_mut()));
        // Any module is the wrong owner of built-in code. A pointer that is not null and points
        // at no module (only compared, never dereferenced; no `ThisModule` is made of it).
        let other = core::ptr::NonNull::<bindings::module>::dangling().as_ptr();
        assert!(!is_owner(&Vtable::<Null>::FOPS, other));
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
