// SPDX-License-Identifier: GPL-2.0

//! The `#[kunit_tests(suite)]` attribute: registers a module's `#[test]` functions as a KUnit
//! suite.
//!
//! Its shape is that of the macro upstream merged in 6.15, so that tests written for it need no
//! change when this implementation is dropped for upstream's: `assert!` and `assert_eq!` inside
//! the module report to KUnit, a test may return `()` or a `Result` (an error fails it), a
//! `#[cfg]` on a test makes it a skipped case when the condition is off, and the module is built
//! only with `CONFIG_KUNIT=y`. Two things differ. A failed `assert!` marks the case failed and
//! the case continues, as `KUNIT_EXPECT_*()` does; upstream's ends the thread without running
//! destructors (it calls `__kunit_abort()`), which leaves held locks and mappings behind. And the
//! cases, the suite and its entry in `.kunit_test_suites` are the `static`s of `kernel::kunit`
//! (no `static mut`).

use proc_macro::{Delimiter, Group, TokenStream, TokenTree};
use std::fmt::Write;

fn is_test_attr(group: &Group) -> bool {
    if group.delimiter() != Delimiter::Bracket {
        return false;
    }
    let mut it = group.stream().into_iter();
    matches!((it.next(), it.next()), (Some(TokenTree::Ident(i)), None) if i.to_string() == "test")
}

fn is_cfg_attr(group: &Group) -> bool {
    let first = group.stream().into_iter().next();
    group.delimiter() == Delimiter::Bracket
        && matches!(first, Some(TokenTree::Ident(i)) if i.to_string() == "cfg")
}

pub(crate) fn kunit_tests(attr: TokenStream, ts: TokenStream) -> TokenStream {
    let mut attr_it = attr.into_iter();
    let suite = match (attr_it.next(), attr_it.next()) {
        (Some(TokenTree::Ident(i)), None) => i.to_string(),
        _ => panic!("expected `#[kunit_tests(suite_name)]`"),
    };
    if suite.len() > 255 {
        panic!("the KUnit suite name `{suite}` is longer than 255 bytes");
    }

    // The item must be `[attributes] [pub] mod name { ... }`: keep everything up to the body.
    let mut head: Vec<TokenTree> = ts.into_iter().collect();
    let body = match head.pop() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g,
        _ => panic!("`#[kunit_tests]` applies to an inline module: `mod tests {{ ... }}`"),
    };
    if !head
        .iter()
        .any(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "mod"))
    {
        panic!("`#[kunit_tests]` applies to an inline module: `mod tests {{ ... }}`");
    }

    // Copy the body, dropping each `#[test]` and remembering the function it marked, with the
    // `#[cfg]` attributes written on it (before or after `#[test]`).
    let mut tests: Vec<(String, String)> = Vec::new();
    let mut out: Vec<TokenTree> = Vec::new();
    let mut cfgs = String::new();
    let mut pending = false;
    let mut after_fn = false;
    let mut it = body.stream().into_iter().peekable();
    while let Some(tt) = it.next() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = it.peek() {
                    if is_test_attr(g) {
                        it.next();
                        pending = true;
                        continue;
                    }
                    if is_cfg_attr(g) {
                        write!(cfgs, "#{g}").unwrap();
                    }
                }
            }
            TokenTree::Ident(i) if pending && i.to_string() == "fn" => after_fn = true,
            TokenTree::Ident(i) if after_fn => {
                tests.push((i.to_string(), std::mem::take(&mut cfgs)));
                pending = false;
                after_fn = false;
            }
            // An item other than a test ends the attributes gathered for it.
            TokenTree::Punct(p) if p.as_char() == ';' => cfgs.clear(),
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace && !pending => cfgs.clear(),
            _ => {}
        }
        out.push(tt);
    }
    if pending {
        panic!("`#[test]` must mark a function");
    }
    if tests.is_empty() {
        panic!("the KUnit suite `{suite}` has no `#[test]` functions");
    }

    // The registration: one `TestCase` type per function, the case list, the suite and its entry
    // in the section KUnit scans.
    let mut reg = String::new();
    let mut cases = String::new();
    for (t, cfg) in &tests {
        write!(
            reg,
            "#[allow(non_camel_case_types)] #[doc(hidden)] struct __kunit_case_{t};
             impl ::kernel::kunit::TestCase for __kunit_case_{t} {{
                 #[allow(unreachable_code)]
                 fn run() {{
                     {cfg} {{
                         ::kernel::kunit::report({t}());
                         return;
                     }}
                     ::kernel::kunit::skip();
                 }}
             }}"
        )
        .unwrap();
        write!(
            cases,
            "::kernel::kunit::Case::new::<__kunit_case_{t}>(::kernel::c_str!(\"{t}\")),"
        )
        .unwrap();
    }
    write!(
        reg,
        "#[doc(hidden)]
         static __KUNIT_CASES: ::kernel::kunit::CaseList<{n}> =
             ::kernel::kunit::CaseList::new([{cases}]);
         #[doc(hidden)]
         static __KUNIT_SUITE: ::kernel::kunit::Suite =
             ::kernel::kunit::Suite::new(::kernel::c_str!(\"{suite}\"), &__KUNIT_CASES);
         #[doc(hidden)]
         #[used]
         #[link_section = \".kunit_test_suites\"]
         static __KUNIT_SUITE_ENTRY: ::kernel::kunit::SuiteEntry =
             // SAFETY: the only entry of `__KUNIT_SUITE`, which is private to this expansion.
             unsafe {{ ::kernel::kunit::SuiteEntry::new(&__KUNIT_SUITE) }};",
        n = tests.len()
    )
    .unwrap();
    out.extend(reg.parse::<TokenStream>().unwrap());

    // A failed check marks the case failed and the case goes on (`KUNIT_EXPECT_*()`), where
    // upstream's ends the thread without running destructors: a check that fails while a guard
    // is held would otherwise leave a lock held or a mapping taken for the rest of the boot.
    let asserts = "#[allow(unused_macros)]
         macro_rules! assert {
             ($cond:expr $(,)?) => {{
                 if !$cond {
                     ::kernel::kunit::fail(::core::format_args!(
                         \"Expected {} to be true, but is false\",
                         ::core::stringify!($cond)
                     ));
                 }
             }};
         }
         #[allow(unused_macros)]
         macro_rules! assert_eq {
             ($left:expr, $right:expr $(,)?) => {{
                 match (&$left, &$right) {
                     (l, r) => {
                         if !(*l == *r) {
                             ::kernel::kunit::fail(::core::format_args!(
                                 \"Expected {} == {}, but {:?} != {:?}\",
                                 ::core::stringify!($left),
                                 ::core::stringify!($right),
                                 l,
                                 r
                             ));
                         }
                     }
                 }
             }};
         }";
    let mut body: Vec<TokenTree> = asserts
        .parse::<TokenStream>()
        .unwrap()
        .into_iter()
        .collect();
    body.extend(out);

    // Built only with `CONFIG_KUNIT=y`, as upstream's.
    let mut result: TokenStream = "#[cfg(CONFIG_KUNIT = \"y\")]".parse().unwrap();
    result.extend(head);
    result.extend([TokenTree::Group(Group::new(
        Delimiter::Brace,
        body.into_iter().collect(),
    ))]);
    result
}
