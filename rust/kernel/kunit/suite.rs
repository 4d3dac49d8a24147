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
//! error fails the case. A `#[cfg]` on a test whose condition is off makes it a skipped case.
//! This is the shape of the `#[kunit_tests]` upstream merged in 6.15, but not a drop-in for it:
//! see [Differences from upstream](#differences-from-upstream).
//!
//! # Assertions and expectations
//!
//! KUnit has two kinds of checks, and so do the suites:
//!
//! - An *assertion* (C's `KUNIT_ASSERT_*()`) stops the case when it fails: what follows may rely
//!   on it. In the body of a `#[test]` function, `assert!`, `assert_eq!` and `assert_ne!` are
//!   assertions: a failed one marks the case failed, logs where and why in KUnit's format, and
//!   returns from the test function, so that what the case holds (lock guards, mappings, objects)
//!   is dropped, in order, as on any return. A test returning [`Result`] then returns
//!   `Err(ECANCELED)`. Since destructors run, a case stopped between holding something back (a
//!   drain, a lock, a completion) and releasing it drops what waits for that release while it is
//!   still held, and can hang in `Drop`: between a hold and its release, use the expectations.
//! - An *expectation* (C's `KUNIT_EXPECT_*()`), [`kunit_expect!`](crate::kunit_expect),
//!   [`kunit_expect_eq!`](crate::kunit_expect_eq) and
//!   [`kunit_expect_ne!`](crate::kunit_expect_ne), marks the case failed and lets it go on: for a
//!   check that nothing after it relies on, so that one run reports every failed one. They work
//!   anywhere in a KUnit test's thread, in helpers too.
//!
//! Only the test functions' own bodies are rewritten, not the functions, closures or macro
//! arguments in them: there, and in helper functions, `assert!` is `core`'s, which panics (a
//! `BUG()`), since code after it may rely on it. Helpers that check should return a [`Result`], or
//! use the expectations. A rewritten assertion leaves the test function through a labelled block
//! around its body: one that ended up anywhere else (a closure the macro did not recognise) is a
//! compile error, never a check that goes on.
//!
//! # Differences from upstream
//!
//! Tests written for this implementation do not all carry over unchanged to upstream's:
//!
//! - [`kunit_expect!`](crate::kunit_expect), [`kunit_expect_eq!`](crate::kunit_expect_eq) and
//!   [`kunit_expect_ne!`](crate::kunit_expect_ne) are this tree's additions; upstream has no
//!   expectations for Rust tests. Tests that use them need porting when this implementation
//!   gives way to upstream's, unless the macros are upstreamed first.
//! - Upstream's `assert!` and `assert_eq!` override `core`'s in the whole module, helpers and
//!   closures included, and a failed one ends the test's thread through `__kunit_abort()` without
//!   running destructors, which leaves a lock held or a mapping taken. Here they are rewritten in
//!   the test functions' own bodies only and stop the case by returning, which runs destructors;
//!   `assert_ne!` is an assertion here too.
//! - The statics are built by the `const` constructors of this module, with no `static mut`.
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
//!         kernel::kunit_expect_eq!(1 + 1, 2);
//!         kernel::kunit_expect_ne!(1 + 1, 3);
//!     }
//!
//!     #[test]
//!     fn allocates() -> Result {
//!         let mut v = KVec::<u8>::with_capacity(16, GFP_KERNEL)?;
//!         v.push(7, GFP_KERNEL)?;
//!         // The index below relies on it: an assertion, which stops the case if it fails.
//!         assert_eq!(v.len(), 1);
//!         kernel::kunit_expect_eq!(v[0], 7);
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

use crate::{
    bindings,
    error::{Error, Result},
    str::CStr,
};
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

    /// What a test function returns when a failed assertion stops it.
    #[doc(hidden)]
    fn aborted() -> Self;
}

impl TestResult for () {
    fn is_test_result_ok(&self) -> bool {
        true
    }

    fn aborted() -> Self {}
}

impl<T> TestResult for Result<T> {
    fn is_test_result_ok(&self) -> bool {
        if let Err(e) = self {
            crate::kunit::err(format_args!("    the test returned {e:?}\n"));
        }
        self.is_ok()
    }

    fn aborted() -> Self {
        Err(Error::from_errno(
            -(bindings::ECANCELED as crate::ffi::c_int),
        ))
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

/// Marks the current KUnit test case failed by a failed expectation, and logs `msg` with the
/// caller's location, as C's `KUNIT_EXPECT_*()` do.
///
/// Outside a KUnit test (for example in a thread a test spawned) the failure cannot be attached to
/// a case; it is logged as an error instead.
#[doc(hidden)]
#[track_caller]
pub fn fail(msg: fmt::Arguments<'_>) {
    failed("EXPECTATION", Location::caller(), msg);
}

/// Marks the current KUnit test case failed by a failed assertion, and logs `msg` with the
/// caller's location, as C's `KUNIT_ASSERT_*()` do. The caller then stops the case.
///
/// Outside a KUnit test the failure is logged as an error instead, as by [`fail`].
#[doc(hidden)]
#[track_caller]
pub fn fail_assertion(msg: fmt::Arguments<'_>) {
    failed("ASSERTION", Location::caller(), msg);
}

fn failed(kind: &str, loc: &Location<'_>, msg: fmt::Arguments<'_>) {
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
        "    # {}: {} FAILED at {}:{}\n    {}\n",
        name,
        kind,
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

/// Checks `cond` and, if it is false, reports it through `$fail` (a `#[track_caller]` function
/// taking [`fmt::Arguments`]); evaluates to whether the check passed.
#[doc(hidden)]
#[macro_export]
macro_rules! __kunit_check_true {
    ($fail:path, $cond:expr $(,)?) => {
        if $cond {
            true
        } else {
            $fail(::core::format_args!(
                "Expected {} to be true, but is false",
                ::core::stringify!($cond)
            ));
            false
        }
    };
    ($fail:path, $cond:expr, $($arg:tt)+) => {
        if $cond {
            true
        } else {
            $fail(::core::format_args!(
                "Expected {} to be true, but is false: {}",
                ::core::stringify!($cond),
                ::core::format_args!($($arg)+)
            ));
            false
        }
    };
}

/// Compares `left` and `right` with `==` (`eq`) or `!=` (`ne`) and, if the comparison is false,
/// reports it through `$fail`, with both values; evaluates to whether the check passed. Each
/// operand is evaluated once.
#[doc(hidden)]
#[macro_export]
macro_rules! __kunit_check_cmp {
    ($fail:path, eq, $left:expr, $right:expr $(, $($arg:tt)+)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left == *right {
                    true
                } else {
                    $fail(::core::format_args!(
                        "Expected {} == {}, but {:?} != {:?}{}",
                        ::core::stringify!($left),
                        ::core::stringify!($right),
                        left,
                        right,
                        $crate::__kunit_message!($($($arg)+)?)
                    ));
                    false
                }
            }
        }
    };
    ($fail:path, ne, $left:expr, $right:expr $(, $($arg:tt)+)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left != *right {
                    true
                } else {
                    $fail(::core::format_args!(
                        "Expected {} != {}, but both are {:?}{}",
                        ::core::stringify!($left),
                        ::core::stringify!($right),
                        left,
                        $crate::__kunit_message!($($($arg)+)?)
                    ));
                    false
                }
            }
        }
    };
}

/// The caller's message of a check, after a `": "`, or nothing.
#[doc(hidden)]
#[macro_export]
macro_rules! __kunit_message {
    () => {
        ""
    };
    ($($arg:tt)+) => {
        ::core::format_args!(": {}", ::core::format_args!($($arg)+))
    };
}

/// Expects a boolean expression to be `true` in a KUnit test, as C's `KUNIT_EXPECT_TRUE()`: if it
/// is false, the current case is marked failed, the failure is logged with its location, and the
/// case goes on.
///
/// For a check that nothing after it relies on; where later code does (an index, a value a
/// `match` or `if let` takes apart, a count that a loop uses), use `assert!` in the test
/// function's body, which stops the case (see [`#[kunit_tests]`](macros::kunit_tests)). An
/// optional message in `format!` syntax follows the condition.
///
/// # Examples
///
/// ```
/// kernel::kunit_expect!(usize::BITS >= 32);
/// kernel::kunit_expect!(u64::BITS == 64, "u64 has {} bits", u64::BITS);
/// ```
#[macro_export]
macro_rules! kunit_expect {
    ($($arg:tt)+) => {{
        let _ = $crate::__kunit_check_true!($crate::kunit::fail, $($arg)+);
    }};
}

/// Expects two expressions to be equal (with [`PartialEq`]) in a KUnit test, as C's
/// `KUNIT_EXPECT_EQ()`: if they are not, the current case is marked failed, both values are
/// logged ([`Debug`](core::fmt::Debug)), and the case goes on. See
/// [`kunit_expect!`](crate::kunit_expect).
///
/// # Examples
///
/// ```
/// kernel::kunit_expect_eq!(1 + 1, 2);
/// kernel::kunit_expect_eq!(u8::MAX, 255, "u8 is {} bits", u8::BITS);
/// ```
#[macro_export]
macro_rules! kunit_expect_eq {
    ($left:expr, $right:expr $(,)?) => {{
        let _ = $crate::__kunit_check_cmp!($crate::kunit::fail, eq, $left, $right);
    }};
    ($left:expr, $right:expr, $($arg:tt)+) => {{
        let _ = $crate::__kunit_check_cmp!($crate::kunit::fail, eq, $left, $right, $($arg)+);
    }};
}

/// Expects two expressions to differ (with [`PartialEq`]) in a KUnit test, as C's
/// `KUNIT_EXPECT_NE()`: if they are equal, the current case is marked failed, the value is logged
/// ([`Debug`](core::fmt::Debug)), and the case goes on. See
/// [`kunit_expect!`](crate::kunit_expect).
///
/// # Examples
///
/// ```
/// kernel::kunit_expect_ne!(1 + 1, 3);
/// ```
#[macro_export]
macro_rules! kunit_expect_ne {
    ($left:expr, $right:expr $(,)?) => {{
        let _ = $crate::__kunit_check_cmp!($crate::kunit::fail, ne, $left, $right);
    }};
    ($left:expr, $right:expr, $($arg:tt)+) => {{
        let _ = $crate::__kunit_check_cmp!($crate::kunit::fail, ne, $left, $right, $($arg)+);
    }};
}

/// `assert!` in the body of a `#[kunit_tests]` test function: on failure, marks the case failed
/// and leaves the labelled block `$case` that `#[kunit_tests]` puts around the body, with the
/// value that stops the case ([`TestResult::aborted`]).
#[doc(hidden)]
#[macro_export]
macro_rules! kunit_case_assert {
    ($case:lifetime, $($arg:tt)+) => {
        if !$crate::__kunit_check_true!($crate::kunit::fail_assertion, $($arg)+) {
            break $case $crate::kunit::TestResult::aborted();
        }
    };
}

/// `assert_eq!` in the body of a `#[kunit_tests]` test function; see
/// [`kunit_case_assert!`](crate::kunit_case_assert).
#[doc(hidden)]
#[macro_export]
macro_rules! kunit_case_assert_eq {
    ($case:lifetime, $left:expr, $right:expr $(,)?) => {
        if !$crate::__kunit_check_cmp!($crate::kunit::fail_assertion, eq, $left, $right) {
            break $case $crate::kunit::TestResult::aborted();
        }
    };
    ($case:lifetime, $left:expr, $right:expr, $($arg:tt)+) => {
        if !$crate::__kunit_check_cmp!($crate::kunit::fail_assertion, eq, $left, $right, $($arg)+) {
            break $case $crate::kunit::TestResult::aborted();
        }
    };
}

/// `assert_ne!` in the body of a `#[kunit_tests]` test function; see
/// [`kunit_case_assert!`](crate::kunit_case_assert).
#[doc(hidden)]
#[macro_export]
macro_rules! kunit_case_assert_ne {
    ($case:lifetime, $left:expr, $right:expr $(,)?) => {
        if !$crate::__kunit_check_cmp!($crate::kunit::fail_assertion, ne, $left, $right) {
            break $case $crate::kunit::TestResult::aborted();
        }
    };
    ($case:lifetime, $left:expr, $right:expr, $($arg:tt)+) => {
        if !$crate::__kunit_check_cmp!($crate::kunit::fail_assertion, ne, $left, $right, $($arg)+) {
            break $case $crate::kunit::TestResult::aborted();
        }
    };
}
