// expect: error[E0133]: call to unsafe function `kernel::kunit::SuiteEntry::new` is unsafe
// SPDX-License-Identifier: GPL-2.0

//! A suite's entry in `.kunit_test_suites` is made by an unsafe constructor: KUnit sets a suite up
//! and tears it down once per entry, and a second teardown frees its log twice, so safe code must
//! not be able to place two. Documented at `kernel::kunit::SuiteEntry::new`.

use kernel::{
    c_str,
    kunit::{Case, CaseList, Suite, SuiteEntry, TestCase},
};

struct Nothing;

impl TestCase for Nothing {
    fn run() {}
}

static CASES: CaseList<1> = CaseList::new([Case::new::<Nothing>(c_str!("nothing"))]);
static SUITE: Suite = Suite::new(c_str!("cf_twice"), &CASES);

#[used]
#[link_section = ".kunit_test_suites"]
static FIRST: SuiteEntry = SuiteEntry::new(&SUITE);

#[used]
#[link_section = ".kunit_test_suites"]
static SECOND: SuiteEntry = SuiteEntry::new(&SUITE);
