// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_kunit_suite_entry_unsafe.rs`: one entry, made under its contract.

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
// SAFETY: the only entry of `SUITE`.
static ENTRY: SuiteEntry = unsafe { SuiteEntry::new(&SUITE) };
