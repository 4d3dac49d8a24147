// SPDX-License-Identifier: GPL-2.0

//! The `#[kunit_tests(suite)]` attribute: registers a module's `#[test]` functions as a KUnit
//! suite.
//!
//! Its shape is that of the macro upstream merged in 6.15: `assert!` and `assert_eq!` in a test
//! report to KUnit, a test may return `()` or a `Result` (an error fails it), a `#[cfg]` on a
//! test makes it a skipped case when the condition is off, and the module is built only with
//! `CONFIG_KUNIT=y`. It is not a drop-in for upstream's, though: tests written for this one need
//! porting where they use what only this tree has, and they behave differently on failure.
//!
//! - A failed `assert!`, `assert_eq!` or `assert_ne!` in a test function's own body is a KUnit
//!   assertion that stops the case by leaving the function, so that what the case holds is
//!   dropped. Upstream's `assert!` and `assert_eq!` (it has no `assert_ne!`) are module-wide
//!   overrides that end the test's thread through `__kunit_abort()` without running destructors,
//!   which leaves held locks and mappings behind. The macro rewrites those calls into
//!   `kernel::kunit_case_assert!` and friends, which `break` out of a labelled block put around
//!   the body. Helpers, and closures, nested functions and other macros' arguments in a test,
//!   keep `core`'s diverging `assert!` (a panic, so a `BUG()`), where upstream's override reaches
//!   them too: code after a failed check never runs as if it had passed. A `break` to the label
//!   from anywhere the rewrite should not have reached (a closure it did not recognise as one)
//!   does not compile. The label is hygienic (`Span::mixed_site()`): the test's own code can
//!   neither name it nor catch the assertions' `break` with a label of the same name.
//! - Because destructors run, a case stopped between holding something back (a drain, a lock, a
//!   completion) and its release drops what waits for that release with it still held, and can
//!   hang in `Drop`: between the two, check with the expectations below.
//! - The non-fatal checks, KUnit's expectations, `kernel::kunit_expect!`, `kunit_expect_eq!` and
//!   `kunit_expect_ne!`, are this tree's additions; upstream has no such macros. Tests that use
//!   them need porting when this implementation is dropped for upstream's, or the macros need
//!   upstreaming first.
//! - The cases, the suite and its entry in `.kunit_test_suites` are the `static`s of
//!   `kernel::kunit` (no `static mut`).
//!
//! One pattern is read by position: in a match's arms, a `|` that starts an arm (first or after a
//! `,`) is a pattern's leading `|`; anywhere else after punctuation, `mut` or an expression
//! keyword it starts a closure, whose assertions stay `core`'s.

use proc_macro::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
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

/// The label of the block around a test function's body, which its assertions leave.
const CASE_LABEL: &str = "__kunit_case";

/// The assertions of a test body, and the `kernel` macros they become.
fn case_assert_macro(name: &str) -> Option<&'static str> {
    match name {
        "assert" => Some("kunit_case_assert"),
        "assert_eq" => Some("kunit_case_assert_eq"),
        "assert_ne" => Some("kunit_case_assert_ne"),
        _ => None,
    }
}

/// Keywords after which a `|` starts a closure rather than being a binary operator: `&mut |x| ..`.
///
/// After punctuation (`&`, `=`, `,`, `=>`, ...) or at the start of a group (`(|x| ..)`), a `|`
/// starts a closure too, except at the start of a match arm, where it is a pattern's leading `|`
/// (see `rewrite`). Not after `let`: there it is a pattern's leading `|` too (`if let | A = x`).
fn starts_expression(keyword: &str) -> bool {
    matches!(
        keyword,
        "return" | "break" | "in" | "else" | "move" | "if" | "while" | "match" | "yield" | "mut"
    )
}

/// Keywords that, followed by `!` and a group, are not a macro call (`if !(a && b) { .. }`).
fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "if" | "while" | "match" | "return" | "in" | "else" | "let" | "break" | "yield" | "as"
    )
}

/// The label tokens (`'__kunit_case`), with the span every use of it shares.
///
/// The span is `Span::mixed_site()`, as a `macro_rules!` macro's own names are: labels are
/// hygienic, so the label is not the one of the same name that the test's code may write (a
/// `break '__kunit_case` of the test's own does not reach it, and a block of the test labelled
/// `'__kunit_case` does not catch the assertions' `break`). `kunit_case_assert!` gets these very
/// tokens as its `$case:lifetime`, so its `break $case` leaves this block.
fn label() -> [TokenTree; 2] {
    let mut quote = Punct::new('\'', Spacing::Joint);
    quote.set_span(Span::mixed_site());
    [
        TokenTree::Punct(quote),
        TokenTree::Ident(Ident::new(CASE_LABEL, Span::mixed_site())),
    ]
}

/// Whether the tokens of a brace group are a match's arms: they have a `=>` of their own, which
/// no block, struct expression or other brace group whose tokens `rewrite` reads has.
fn is_match_body(tokens: &[TokenTree]) -> bool {
    tokens.windows(2).any(|w| match (&w[0], &w[1]) {
        (TokenTree::Punct(a), TokenTree::Punct(b)) => {
            a.as_char() == '=' && a.spacing() == Spacing::Joint && b.as_char() == '>'
        }
        _ => false,
    })
}

/// Whether `prev` makes the keyword after it part of a type: `'static`, `*const T`.
fn after_lifetime_or_pointer(prev: Option<&TokenTree>) -> bool {
    matches!(prev, Some(TokenTree::Punct(p)) if matches!(p.as_char(), '\'' | '*'))
}

fn is_punct(tt: Option<&TokenTree>, c: char) -> bool {
    matches!(tt, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

fn is_group(tt: Option<&TokenTree>, delimiter: Delimiter) -> bool {
    matches!(tt, Some(TokenTree::Group(g)) if g.delimiter() == delimiter)
}

/// A test function's body with its assertions rewritten to stop the case.
///
/// `{ #![attrs] stmts }` becomes `{ #![attrs] '__kunit_case: { stmts' } }`, where in `stmts'`
/// each `assert!(..)`, `assert_eq!(..)` and `assert_ne!(..)` that the function itself runs is
/// `::kernel::kunit_case_assert!('__kunit_case, ..)` (and so on): on failure it marks the case
/// failed and breaks out of the block with the value that stops the case, so that the function
/// returns and drops what it holds. A body without assertions is left as it is.
fn case_body(body: &Group) -> Group {
    let tokens: Vec<TokenTree> = body.stream().into_iter().collect();
    // Inner attributes (`#![expect(..)]`) stay first in the function's body.
    let mut attrs = 0;
    while is_punct(tokens.get(attrs), '#')
        && is_punct(tokens.get(attrs + 1), '!')
        && is_group(tokens.get(attrs + 2), Delimiter::Bracket)
    {
        attrs += 3;
    }
    let (rewritten, changed) = rewrite(&tokens[attrs..], false);
    if !changed {
        return body.clone();
    }
    let mut stream: Vec<TokenTree> = tokens[..attrs].to_vec();
    stream.extend(label());
    stream.push(TokenTree::Punct(Punct::new(':', Spacing::Alone)));
    let mut block = Group::new(Delimiter::Brace, rewritten.into_iter().collect());
    block.set_span(body.span());
    stream.push(TokenTree::Group(block));
    let mut group = Group::new(Delimiter::Brace, stream.into_iter().collect());
    group.set_span(body.span());
    group
}

/// Copies `tokens[*i]` and what follows it up to and including the first brace group (or `;`),
/// unchanged: an item, whose own code is not the test function's.
fn copy_item(tokens: &[TokenTree], i: &mut usize, out: &mut Vec<TokenTree>) {
    while let Some(tt) = tokens.get(*i) {
        out.push(tt.clone());
        *i += 1;
        if is_group(Some(tt), Delimiter::Brace) || is_punct(Some(tt), ';') {
            return;
        }
    }
}

/// Copies the closure that starts at `tokens[*i]` (its `|`) unchanged: its parameters, and its
/// body, a block or an expression that ends at the next `,` or `;` of this level.
fn copy_closure(tokens: &[TokenTree], i: &mut usize, out: &mut Vec<TokenTree>) {
    // The parameters: `||`, or `|` up to the next `|`.
    let empty = matches!(tokens.get(*i), Some(TokenTree::Punct(p)) if p.spacing() == Spacing::Joint)
        && is_punct(tokens.get(*i + 1), '|');
    out.push(tokens[*i].clone());
    *i += 1;
    if empty {
        out.push(tokens[*i].clone());
        *i += 1;
    } else {
        while let Some(tt) = tokens.get(*i) {
            out.push(tt.clone());
            *i += 1;
            if is_punct(Some(tt), '|') {
                break;
            }
        }
    }
    // A return type: the body is the block after it.
    if is_punct(tokens.get(*i), '-') && is_punct(tokens.get(*i + 1), '>') {
        copy_item(tokens, i, out);
        return;
    }
    while let Some(tt) = tokens.get(*i) {
        if is_punct(Some(tt), ',') || is_punct(Some(tt), ';') {
            return;
        }
        out.push(tt.clone());
        *i += 1;
    }
}

/// Rewrites the assertions that the code `tokens` (of a test function's body) runs itself into
/// the case's; returns the tokens and whether any was rewritten. `arms` says that `tokens` are
/// the arms of a `match` (see `is_match_body`).
///
/// Code that another function runs is copied unchanged, so that its `assert!` stays `core`'s:
/// nested items (functions, `impl`s, `const`s, ...), closures, `async` blocks, and the arguments
/// of other macros, which may put them anywhere. A closure is told from `|` used as an operator
/// by what precedes it; should that fail, the rewritten assertion's `break` to the label of the
/// test function's body does not compile in a closure. In a match's arms, a `|` that starts an
/// arm (first, or after a `,`) is its pattern's leading `|`, not a closure; after the arm's `}`
/// or `]` (an attribute), it is read as an operator, which is what it takes for a pattern too.
fn rewrite(tokens: &[TokenTree], arms: bool) -> (Vec<TokenTree>, bool) {
    let mut out = Vec::with_capacity(tokens.len());
    let mut changed = false;
    let mut i = 0;
    while let Some(tt) = tokens.get(i) {
        match tt {
            TokenTree::Ident(id) => {
                let word = id.to_string();
                let next = tokens.get(i + 1);
                let prev = i.checked_sub(1).and_then(|p| tokens.get(p));
                let path = is_punct(prev, ':');
                let call = matches!(tokens.get(i + 2), Some(TokenTree::Group(_)));
                if is_punct(next, '!') && call && !is_keyword(&word) {
                    match case_assert_macro(&word) {
                        // `core::assert!(..)` is asked for by name: left alone.
                        Some(name) if !path => {
                            if let Some(TokenTree::Group(args)) = tokens.get(i + 2) {
                                out.extend(case_assert(name, id.span(), args));
                                changed = true;
                            }
                        }
                        // Another macro: its arguments are copied unchanged.
                        _ => out.extend(tokens[i..i + 3].iter().cloned()),
                    }
                    i += 3;
                    continue;
                }
                match word.as_str() {
                    // A nested function (not `fn(..)`, the type), or another item with code.
                    "fn" if matches!(next, Some(TokenTree::Ident(_))) => {
                        copy_item(tokens, &mut i, &mut out);
                        continue;
                    }
                    // An async closure: `async |x| ..` is copied as a closure; in
                    // `async move |x| ..` the `move` arm below takes it.
                    "async" if is_punct(next, '|') => {
                        out.push(tt.clone());
                        i += 1;
                        copy_closure(tokens, &mut i, &mut out);
                        continue;
                    }
                    "async"
                        if matches!(next, Some(TokenTree::Ident(m)) if m.to_string() == "move")
                            && is_punct(tokens.get(i + 2), '|') =>
                    {
                        out.push(tt.clone());
                        i += 1;
                        continue;
                    }
                    // Not `'static` nor `*const T`.
                    "impl" | "trait" | "mod" | "macro_rules" | "const" | "static" | "async"
                        if !after_lifetime_or_pointer(prev) =>
                    {
                        copy_item(tokens, &mut i, &mut out);
                        continue;
                    }
                    "move" if is_punct(next, '|') => {
                        out.push(tt.clone());
                        i += 1;
                        copy_closure(tokens, &mut i, &mut out);
                        continue;
                    }
                    _ => {}
                }
            }
            TokenTree::Punct(p) if p.as_char() == '|' => {
                // After an operand (a name, a literal, a group, `?`) or the first `|` of `||`,
                // it is an operator; after another punctuation or a keyword, a closure.
                // In a match's arms, a `|` that starts an arm is a pattern's leading `|`.
                let closure = match i.checked_sub(1).and_then(|p| tokens.get(p)) {
                    None => !arms,
                    Some(TokenTree::Punct(prev)) if prev.as_char() == ',' => !arms,
                    Some(TokenTree::Punct(prev)) => !matches!(prev.as_char(), '?' | '|'),
                    Some(TokenTree::Ident(prev)) => starts_expression(&prev.to_string()),
                    Some(_) => false,
                };
                if closure {
                    copy_closure(tokens, &mut i, &mut out);
                    continue;
                }
            }
            TokenTree::Group(g) => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let arms = g.delimiter() == Delimiter::Brace && is_match_body(&inner);
                let (inner, inner_changed) = rewrite(&inner, arms);
                if inner_changed {
                    let mut group = Group::new(g.delimiter(), inner.into_iter().collect());
                    group.set_span(g.span());
                    out.push(TokenTree::Group(group));
                    changed = true;
                    i += 1;
                    continue;
                }
            }
            _ => {}
        }
        out.push(tt.clone());
        i += 1;
    }
    (out, changed)
}

/// `::kernel::NAME!('__kunit_case, ARGS)`, spanned as the `assert` it replaces, so that the
/// failure is reported at its line. The call keeps the delimiter of the original one, so that
/// `assert! { c }` stays a statement that needs no `;`.
fn case_assert(name: &str, span: Span, args: &Group) -> Vec<TokenTree> {
    let mut call_args: Vec<TokenTree> = label().into();
    call_args.push(TokenTree::Punct(Punct::new(',', Spacing::Alone)));
    call_args.extend(args.stream());
    let mut group = Group::new(args.delimiter(), call_args.into_iter().collect());
    group.set_span(args.span());
    let mut tokens = Vec::new();
    for segment in ["kernel", name] {
        tokens.push(TokenTree::Punct(Punct::new(':', Spacing::Joint)));
        tokens.push(TokenTree::Punct(Punct::new(':', Spacing::Alone)));
        tokens.push(TokenTree::Ident(Ident::new(segment, span)));
    }
    tokens.push(TokenTree::Punct(Punct::new('!', Spacing::Alone)));
    for tt in &mut tokens {
        tt.set_span(span);
    }
    tokens.push(TokenTree::Group(group));
    tokens
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
    // `#[cfg]` attributes written on it (before or after `#[test]`), and rewriting the assertions
    // in that function's body (see `case_body`).
    let mut tests: Vec<(String, String)> = Vec::new();
    let mut out: Vec<TokenTree> = Vec::new();
    let mut cfgs = String::new();
    let mut pending = false;
    let mut after_fn = false;
    let mut in_signature = false;
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
                in_signature = true;
            }
            // The first block after a test's name is its body.
            TokenTree::Group(g) if in_signature && g.delimiter() == Delimiter::Brace => {
                in_signature = false;
                out.push(TokenTree::Group(case_body(g)));
                continue;
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

    // Built only with `CONFIG_KUNIT=y`, as upstream's.
    let mut result: TokenStream = "#[cfg(CONFIG_KUNIT = \"y\")]".parse().unwrap();
    result.extend(head);
    result.extend([TokenTree::Group(Group::new(
        Delimiter::Brace,
        out.into_iter().collect(),
    ))]);
    result
}
