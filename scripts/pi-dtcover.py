#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Device-tree coverage of a kernel configuration: for every enabled node of
each board's device tree, is there a driver, built in or as a module?

Usage: pi-dtcover.py DTC SRC CONFIG REFCONFIG BUILD DTB...

SRC is the kernel source tree, CONFIG the configuration checked (make pi's),
REFCONFIG the reference (Debian's arm64 configuration), BUILD the build
directory of CONFIG, DTC a dtc binary and each DTB a board's device tree.

A node is enabled when it and each of its ancestors has no status or status
"okay". It is covered when one of its compatible strings, besides those the
core handles itself (simple-bus, ...), is named in quotes by a C file under
drivers/, sound/, net/ or kernel/ whose object the configuration builds, in
or as a module; CPU nodes, and nodes with a generic compatible the core
handles itself (simple-bus, simple-mfd, syscon, ...), are the core's. Whether a configuration builds an
object is read from the Kbuild makefiles, the same way for both
configurations: the object's own line (obj-$(CONFIG_X) += foo.o, or as part
of a composite object, foo-$(CONFIG_Y) += part.o), and the line of each
directory above it (obj-$(CONFIG_Z) += dir/), the weakest of them deciding
(n < m < y). For CONFIG the answer is checked against BUILD as well: each
driver object the makefiles say is built must be there (in modules.order if
a module), so that the makefile reading is shown to match what kbuild did.

Prints, for each board, each enabled node with its driver under both
configurations, then a summary line with both counts and the nodes each
leaves uncovered. Exits 1 if CONFIG leaves uncovered a node that REFCONFIG
covers, or if the reading of the makefiles disagrees with BUILD.
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module  # noqa: E402

dtcheck = import_module("pi-dtcheck")

CORE = dtcheck.CORE | {"syscon", "simple-pm-bus", "regulator-fixed-domain"}
ORDER = {"n": 0, "m": 1, "y": 2}
SEARCH = ["drivers", "sound", "net", "kernel"]


def read_config(path):
    cfg = {}
    for line in open(path):
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line.strip())
        if m:
            cfg[m.group(1)] = m.group(2)
    return cfg


class Kbuild:
    """Reads which objects a configuration builds from the makefiles."""

    def __init__(self, src, cfg):
        self.src = src
        self.cfg = cfg
        self.parsed = {}
        self.memo = {}

    def value(self, text):
        """y, m or n for an assignment's left-hand side variable part."""
        def sub(m):
            v = self.cfg.get(m.group(1), "")
            return v if v in ("y", "m") else ""
        # $(subst m,y,$(CONFIG_X)): y when X is y or m.
        text = re.sub(r"\$\(subst m,y,\$\((CONFIG_\w+)\)\)",
                      lambda m: "y" if sub(m) else "", text)
        return re.sub(r"\$\((CONFIG_\w+)\)", sub, text)

    def entries(self, d):
        """[(lhs with its CONFIG values substituted, [rhs tokens])] of d's
        Kbuild file (or Makefile)."""
        if d in self.parsed:
            return self.parsed[d]
        out = []
        for name in ("Kbuild", "Makefile"):
            path = os.path.join(self.src, d, name)
            if os.path.exists(path):
                text = open(path, errors="replace").read().replace("\\\n", " ")
                for line in text.splitlines():
                    line = self.value(line.split("#", 1)[0])
                    m = re.match(r"^\s*([\w.$()-]+)\s*(?:\+=|:=|\?=|=)\s*(.*)$", line)
                    if m:
                        out.append((m.group(1), m.group(2).split()))
                break
        self.parsed[d] = out
        return out

    def obj(self, d, name):
        """How d/name (an object, or a directory ending in /) is built."""
        key = (d, name)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = "n"  # cycles
        best = "n"
        for lhs, rhs in self.entries(d):
            if name not in rhs:
                continue
            if lhs.startswith("obj-") or lhs.startswith("subdir-"):
                v = lhs.split("-", 1)[1]
                v = v if v in ("y", "m") else "n"
            else:
                # A part of a composite object: comp-y, comp-objs, comp-m,
                # comp-$(CONFIG_X).
                m = re.match(r"^(.*?)-(y|m|objs|)$", lhs)
                if not m or not m.group(1):
                    continue
                part = "y" if m.group(2) in ("y", "objs") else ("m" if m.group(2) == "m" else "n")
                comp = self.obj(d, m.group(1) + ".o")
                if part == "n" or (part == "m" and comp == "y"):
                    v = "n"
                else:
                    v = comp
            if ORDER[v] > ORDER[best]:
                best = v
        if best != "n":
            best = min(best, self.dir(d), key=ORDER.get)
        self.memo[key] = best
        return best

    def dir(self, d):
        """How the directory d is descended into."""
        if "/" not in d or d.startswith("arch/arm64/") and d.count("/") == 2:
            return "y"
        parent, base = d.rsplit("/", 1)
        v = self.obj(parent, base + "/")
        if v == "n":
            # A directory named from further up (obj-y += sub/dir/).
            up = parent
            rest = base + "/"
            while "/" in up and v == "n":
                up, b = up.rsplit("/", 1)
                rest = b + "/" + rest
                v = self.obj(up, rest)
        return v

    def file(self, path):
        """How the object of the C file path is built."""
        d, base = path.rsplit("/", 1)
        o = base[:-2] + ".o"
        v = self.obj(d, o)
        up, rel = d, o
        while v == "n" and "/" in up:
            # An object named from a directory above (obj-y += sub/foo.o,
            # comp-objs += sub/dir/foo.o).
            up, b = up.rsplit("/", 1)
            rel = b + "/" + rel
            v = self.obj(up, rel)
        return v


def drivers_for(src, compat, cache):
    """C files under SEARCH that name compat in quotes (git grep where SRC
    is a git work tree, as tree.sh makes it: much faster than grep -r)."""
    if compat not in cache:
        git = os.path.exists(os.path.join(src, ".git"))
        # A match table's entry (.compatible = "...") first: other files
        # may name the string for a quirk (gpiolib-of.c names regulators').
        esc = re.sub(r"([.+*?^$()\[\]{}|\\])", r"\\\1", compat)
        for pat, mode in ((r'\.compatible[[:space:]]*=[[:space:]]*"' + esc + '"', "-lE"),
                          (f'"{compat}"', "-lF")):
            if git:
                cmd = ["git", "grep", mode, pat, "--"] + [f"{d}/*.c" for d in SEARCH]
            else:
                cmd = ["grep", "-r", mode, "--include=*.c", pat] + SEARCH
            r = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
            cache[compat] = sorted(r.stdout.split())
            if cache[compat]:
                break
    return cache[compat]


def enabled_nodes(tree):
    out = []
    for path in sorted(tree.nodes):
        p, ok = path, True
        while p:
            st = tree.nodes.get(p, {}).get("status", '"okay"').strip('"')
            if st not in ("okay", "ok"):
                ok = False
                break
            p = dtcheck.parent(p)
        if ok and path != "/" and "compatible" in tree.nodes[path]:
            out.append(path)
    return out


def cover(tree, path, kb, src, cache):
    """(driver file, y|m) for the node, ('core', 'y'), or None."""
    props = tree.nodes[path]
    if props.get("device_type", "").strip('"') == "cpu":
        return ("core", "y")
    compats = dtcheck.strings(props.get("compatible"))
    rest = [c for c in compats if c not in CORE]
    if len(rest) < len(compats):
        # simple-bus, simple-mfd, syscon, ...: the core populates the node's
        # children and hands out its registers whatever else it is.
        return ("core", "y")
    best = None
    for c in rest:
        for f in drivers_for(src, c, cache):
            v = kb.file(f)
            if v != "n" and (best is None or ORDER[v] > ORDER[best[1]]):
                best = (f, v)
    return best


def built(build, f):
    """y, m or n: how BUILD built the object of source file f."""
    o = f[:-2] + ".o"
    if not os.path.exists(os.path.join(build, o)):
        return "n"
    return "m" if o in built.modparts else "y"


def module_parts(build):
    """Objects linked into modules: each module's .mod lists its objects."""
    parts = set()
    order = os.path.join(build, "modules.order")
    for line in open(order):
        mod = line.strip()
        if not mod:
            continue
        base = os.path.splitext(mod)[0]
        modfile = os.path.join(build, base + ".mod")
        if os.path.exists(modfile):
            for o in open(modfile).read().split():
                parts.add(o)
        else:
            parts.add(base + ".o")
    return parts


def main(argv):
    if len(argv) < 6:
        sys.stderr.write(__doc__)
        return 2
    dtc, src, config, refconfig, build, *dtbs = argv
    kb = Kbuild(src, read_config(config))
    ref = Kbuild(src, read_config(refconfig))
    built.modparts = module_parts(build)
    cache = {}
    bad = 0
    for dtb in dtbs:
        text = subprocess.run([dtc, "-q", "-I", "dtb", "-O", "dts", dtb],
                              capture_output=True, text=True, check=True).stdout
        tree = dtcheck.Tree(dtcheck.parse_dts(text))
        board = os.path.basename(dtb)[:-4]
        nodes = enabled_nodes(tree)
        ours, theirs, only_ref, mismatch = [], [], [], []
        for n in nodes:
            a = cover(tree, n, kb, src, cache)
            b = cover(tree, n, ref, src, cache)
            if a:
                ours.append(n)
                if a[0] != "core" and built(build, a[0]) != a[1]:
                    mismatch.append(f"{n}: {a[0]} read as {a[1]}, built {built(build, a[0])}")
            if b:
                theirs.append(n)
                if not a:
                    only_ref.append(n)
            fa = f"{a[0]} ({a[1]})" if a else "NONE"
            fb = f"{b[0]} ({b[1]})" if b else "NONE"
            print(f"{board} {n}: {fa}; reference {fb}")
        print(f"{board}: {len(nodes)} enabled nodes; covered: {len(ours)} (rzram's), "
              f"{len(theirs)} (reference)")
        print(f"{board}: uncovered (rzram's): " +
              (" ".join(n for n in nodes if n not in ours) or "none"))
        print(f"{board}: uncovered (reference): " +
              (" ".join(n for n in nodes if n not in theirs) or "none"))
        for n in only_ref:
            print(f"FAIL {board} {n}: the reference covers it, rzram's does not")
        for m in mismatch:
            print(f"FAIL {board} {m}")
        bad += len(only_ref) + len(mismatch)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
