// SPDX-License-Identifier: GPL-2.0

//! The `#[kunit_tests(suite)]` attribute: registers a module's `#[test]` functions as a KUnit
//! suite.

use proc_macro::{Delimiter, Group, TokenStream, TokenTree};
use std::fmt::Write;

fn is_test_attr(group: &Group) -> bool {
    if group.delimiter() != Delimiter::Bracket {
        return false;
    }
    let mut it = group.stream().into_iter();
    matches!((it.next(), it.next()), (Some(TokenTree::Ident(i)), None) if i.to_string() == "test")
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

    // Copy the body, dropping each `#[test]` and remembering the function it marked.
    let mut tests = Vec::new();
    let mut out: Vec<TokenTree> = Vec::new();
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
                }
            }
            TokenTree::Ident(i) if pending && i.to_string() == "fn" => after_fn = true,
            TokenTree::Ident(i) if after_fn => {
                tests.push(i.to_string());
                pending = false;
                after_fn = false;
            }
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
    for t in &tests {
        write!(
            reg,
            "#[allow(non_camel_case_types)] #[doc(hidden)] struct __kunit_case_{t};
             impl ::kernel::kunit::TestCase for __kunit_case_{t} {{
                 fn run() {{ ::kernel::kunit::TestOutcome::report({t}()); }}
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
             ::kernel::kunit::SuiteEntry::new(&__KUNIT_SUITE);",
        n = tests.len()
    )
    .unwrap();
    out.extend(reg.parse::<TokenStream>().unwrap());

    let mut result: TokenStream = head.into_iter().collect();
    result.extend([TokenTree::Group(Group::new(
        Delimiter::Brace,
        out.into_iter().collect(),
    ))]);
    result
}
