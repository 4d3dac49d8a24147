// SPDX-License-Identifier: GPL-2.0

//! KUnit test suites written in Rust.
//!
//! A suite is a module marked with [`#[kunit_tests(name)]`](macros::kunit_tests); each function
//! in it marked `#[test]` becomes one KUnit test case. The macro expands to the statics defined
//! here: a [`CaseList`] of [`Case`]s with KUnit's terminator, a [`Suite`] naming it, and a
//! [`SuiteEntry`] in the `.kunit_test_suites` section. KUnit finds that section in `vmlinux` (for
//! built-in code) or in the module, exactly as it finds suites registered by C's
//! `kunit_test_suites()`, so `kunit.py` runs and reports Rust suites like C ones.
//!
//! A test case is a function taking no arguments and returning `()` or [`Result`]. Returning an
//! error fails the case. Inside the module `assert!` and `assert_eq!` report to KUnit: a failed
//! one marks the case failed, logs where and why in KUnit's format, and lets the case continue,
//! like C's `KUNIT_EXPECT_*()`. (Upstream's ends the test's thread without running destructors,
//! which would leave a lock held or a mapping taken when a check fails under a guard.) A `#[cfg]`
//! on a test whose condition is off makes it a skipped case. Otherwise this is the shape of the
//! `#[kunit_tests]` upstream merged in 6.15, so the tests do not change when this implementation
//! gives way to upstream's.
//!
//! C header: [`include/kunit/test.h`](srctree/include/kunit/test.h)
//!
//! # Examples
//!
//! ```ignore
//! #[kunit_tests(rust_example)]
//! mod tests {
//!     use kernel::prelude::*;
//!
//!     #[test]
//!     fn adds() {
//!         assert_eq!(1 + 1, 2);
//!     }
//!
//!     #[test]
//!     fn allocates() -> Result {
//!         let v = KVec::<u8>::with_capacity(16, GFP_KERNEL)?;
//!         assert!(v.capacity() >= 16);
//!         Ok(())
//!     }
//!
//!     #[cfg(CONFIG_64BIT)]
//!     #[test]
//!     fn wide() {
//!         assert_eq!(core::mem::size_of::<usize>(), 8);
//!     }
//! }
//! ```

use crate::{bindings, error::Result, str::CStr};
use core::{cell::UnsafeCell, fmt, panic::Location};

/// A test case body, implemented by the types [`#[kunit_tests]`](macros::kunit_tests) generates.
#[doc(hidden)]
pub trait TestCase {
    /// Runs the case; KUnit has already made it the current test of this thread.
    fn run();
}

/// What a test case function may return: `()` or a [`Result`].
pub trait TestResult {
    /// Returns whether the result means success; logs an error.
    fn is_test_result_ok(&self) -> bool;
}

impl TestResult for () {
    fn is_test_result_ok(&self) -> bool {
        true
    }
}

impl<T> TestResult for Result<T> {
    fn is_test_result_ok(&self) -> bool {
        if let Err(e) = self {
            crate::kunit::err(format_args!("    the test returned {e:?}\n"));
        }
        self.is_ok()
    }
}

/// Returns whether a test's result means success, as upstream's function of the same name.
pub fn is_test_result_ok(t: impl TestResult) -> bool {
    t.is_test_result_ok()
}

/// Reports a test's result to KUnit: an error fails the current case.
#[doc(hidden)]
#[track_caller]
pub fn report(t: impl TestResult) {
    if !is_test_result_ok(t) {
        fail(format_args!("the test returned an error"));
    }
}

/// Marks the current KUnit test case skipped: its `#[cfg]` is off in this build.
#[doc(hidden)]
pub fn skip() {
    // SAFETY: FFI call without safety requirements.
    let test = unsafe { bindings::kunit_get_current_test() };
    if test.is_null() {
        return;
    }
    // SAFETY: `test` is the running test of this thread, which KUnit keeps alive until the case
    // returns; KUnit reads `status` with `READ_ONCE()` after the case, matched by a volatile
    // write.
    unsafe {
        core::ptr::write_volatile(
            core::ptr::addr_of_mut!((*test).status),
            bindings::kunit_status_KUNIT_SKIPPED,
        )
    };
}

/// Entry point KUnit calls for a case of type `T`.
///
/// # Safety
///
/// Must only be called by KUnit, as the `run_case` of a registered case.
unsafe extern "C" fn run_case<T: TestCase>(_test: *mut bindings::kunit) {
    // KUnit set the current test of this thread before calling us, which is what `fail()` reads.
    T::run();
}

/// One KUnit test case: a `struct kunit_case` that KUnit fills in while it runs.
///
/// # Invariants
///
/// The wrapped `kunit_case` is either all zeroes (the array terminator) or has a valid
/// `run_case` and a `name` pointing to a `'static` NUL-terminated string.
#[doc(hidden)]
#[repr(transparent)]
pub struct Case(UnsafeCell<bindings::kunit_case>);

// SAFETY: Rust code never accesses the case after construction; only KUnit writes to it (while
// it runs the suite, possibly from several threads through debugfs, which is KUnit's business).
unsafe impl Sync for Case {}

impl Case {
    /// The zeroed case that ends a suite's case array.
    const fn end() -> Case {
        // INVARIANT: all zeroes.
        // SAFETY: `kunit_case` is plain data (pointers, integers, optional function pointers),
        // for which all zeroes is a valid value.
        Case(UnsafeCell::new(unsafe { core::mem::zeroed() }))
    }

    /// Creates the case `name`, whose body is `T::run`.
    pub const fn new<T: TestCase>(name: &'static CStr) -> Case {
        // SAFETY: as in `end`, all zeroes is a valid `kunit_case`.
        let mut case: bindings::kunit_case = unsafe { core::mem::zeroed() };
        case.run_case = Some(run_case::<T>);
        case.name = name.as_char_ptr();
        // INVARIANT: `run_case` and `name` were just set as required.
        Case(UnsafeCell::new(case))
    }
}

/// The cases of a suite followed by the terminator KUnit expects.
///
/// # Invariants
///
/// In memory this is `N + 1` consecutive `kunit_case`s, the last of them the all-zero terminator:
/// `#[repr(C)]` lays `end` out right after `cases`, with no padding since the two have the same
/// type.
#[doc(hidden)]
#[repr(C)]
pub struct CaseList<const N: usize> {
    cases: [Case; N],
    end: Case,
}

impl<const N: usize> CaseList<N> {
    /// Creates the list from `cases` and appends the terminator.
    pub const fn new(cases: [Case; N]) -> Self {
        // INVARIANT: `end` is the terminator.
        CaseList {
            cases,
            end: Case::end(),
        }
    }
}

/// A KUnit test suite: a `struct kunit_suite` pointing at a [`Case`] array.
///
/// # Invariants
///
/// `test_cases` points to a `'static` array of cases terminated by an all-zero case.
#[doc(hidden)]
#[repr(transparent)]
pub struct Suite(UnsafeCell<bindings::kunit_suite>);

// SAFETY: Rust code never accesses the suite after construction; only KUnit writes to it.
unsafe impl Sync for Suite {}

impl Suite {
    /// Creates the suite `name` over `cases`.
    ///
    /// A name longer than KUnit's 255-byte limit fails the build when `new` is evaluated in a
    /// `static` initialiser.
    pub const fn new<const N: usize>(name: &'static CStr, cases: &'static CaseList<N>) -> Suite {
        // SAFETY: all zeroes is a valid `kunit_suite` (plain data and optional function
        // pointers).
        let mut suite: bindings::kunit_suite = unsafe { core::mem::zeroed() };
        let bytes = name.as_bytes_with_nul();
        assert!(bytes.len() <= suite.name.len(), "KUnit suite name too long");
        let mut i = 0;
        while i < bytes.len() {
            suite.name[i] = bytes[i] as crate::ffi::c_char;
            i += 1;
        }
        // By the invariant of `CaseList`, and because `Case` is a transparent wrapper of
        // `kunit_case`, this is a terminated `kunit_case` array. KUnit writes through the pointer;
        // that is allowed because each case is an `UnsafeCell`.
        suite.test_cases = core::ptr::from_ref(cases).cast_mut().cast();
        // INVARIANT: `cases` is `'static` and terminated.
        Suite(UnsafeCell::new(suite))
    }
}

/// The pointer to a [`Suite`] that goes into the `.kunit_test_suites` section.
#[doc(hidden)]
#[repr(transparent)]
pub struct SuiteEntry(*const Suite);

// SAFETY: the entry is an immutable pointer to a `Sync` static.
unsafe impl Sync for SuiteEntry {}

impl SuiteEntry {
    /// Creates the section entry for `suite`.
    ///
    /// # Safety
    ///
    /// It must be the only entry of `suite` in `.kunit_test_suites`: KUnit sets a suite up and
    /// tears it down once per entry, and tearing it down twice frees its log twice.
    pub const unsafe fn new(suite: &'static Suite) -> SuiteEntry {
        SuiteEntry(suite)
    }
}

/// Marks the current KUnit test case failed and logs `msg` with the caller's location.
///
/// Outside a KUnit test (for example in a thread a test spawned) the failure cannot be attached to
/// a case; it is logged as an error instead.
#[doc(hidden)]
#[track_caller]
pub fn fail(msg: fmt::Arguments<'_>) {
    let loc = Location::caller();
    // SAFETY: FFI call without safety requirements.
    let test = unsafe { bindings::kunit_get_current_test() };
    if test.is_null() {
        crate::pr_err!(
            "KUnit check failed outside a test at {}:{}: {}\n",
            loc.file(),
            loc.line(),
            msg
        );
        return;
    }
    // SAFETY: `test` is the running test of this thread, which KUnit keeps alive until the case
    // returns; its name is a NUL-terminated string.
    let name = unsafe { CStr::from_char_ptr((*test).name) };
    crate::pr_err!(
        "    # {}: EXPECTATION FAILED at {}:{}\n    {}\n",
        name,
        loc.file(),
        loc.line(),
        msg
    );
    // SAFETY: as above, `test` is valid; KUnit reads `status` with `READ_ONCE()` after the case
    // and the C side sets it with `WRITE_ONCE()`, matched here by a volatile write.
    unsafe {
        core::ptr::write_volatile(
            core::ptr::addr_of_mut!((*test).status),
            bindings::kunit_status_KUNIT_FAILURE,
        )
    };
}
