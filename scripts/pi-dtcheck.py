#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that a kernel build has a built-in driver for every device-tree node
a board needs, and for everything those nodes depend on.

Usage: pi-dtcheck.py [--selftest] DTC BUILD SRC DTB NODE|obj:OBJECT...

DTC is a dtc binary, BUILD the kernel's build directory, SRC its source tree,
DTB the board's device tree blob, and each NODE a path in it
(/soc/serial@7e215040), or obj:OBJECT for a driver that matches by bus ID
(obj:drivers/usb/host/xhci-pci.o), which must be built in. From each node the check follows the references a
driver needs before it can probe: clocks, resets, power domains, mailboxes,
DMA channels, GPIOs, supplies, the PHY, pin control and the interrupt parent
(each phandle with its specifier cells skipped, by the target's #*-cells), and
each node's ancestors up to the root. Every node reached that has a
compatible and is not disabled (a node asked for must not be) must have one
compatible string, besides the generic ones the core handles itself
(simple-bus, simple-mfd, ...), that a source file under drivers/ (or
kernel/dma, for reserved memory) names, and that file's object must be built into the kernel:
present in BUILD and not listed in BUILD/modules.order.

Prints one line per node with the driver found, and a FAIL line for each node
without one; exits 1 if there is any. --selftest runs the same check with
drivers/mmc/host/sdhci-iproc.o treated as not built, and passes if the check
then fails for the SD controller: it shows the check catches a missing driver.
"""
import os
import re
import subprocess
import sys

# Compatibles the core handles without a driver of their own.
CORE = {"simple-bus", "simple-mfd", "fixed-partitions", "shared-dma-pool"}

# Properties holding phandles followed by specifier cells, with the name of
# the #*-cells property that sizes the specifier.
SPEC = {
    "clocks": "#clock-cells",
    "resets": "#reset-cells",
    "power-domains": "#power-domain-cells",
    "mboxes": "#mbox-cells",
    "dmas": "#dma-cells",
    "interrupts-extended": "#interrupt-cells",
    "phys": "#phy-cells",
}


def parse_dts(text):
    """Parses dtc's dts output into {path: {prop: raw value}}."""
    nodes = {}
    stack = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("/dts-v1/") or line.startswith("/memreserve/"):
            continue
        m = re.match(r"^(?:[\w,.-]+:\s*)?([\w,.@+-]+|/)\s*\{$", line)
        if m:
            name = m.group(1)
            path = "/" if name == "/" else (stack[-1].rstrip("/") + "/" + name)
            stack.append(path)
            nodes[path] = {}
            continue
        if line == "};":
            stack.pop()
            continue
        m = re.match(r"^([#\w,.+?-]+)(?:\s*=\s*(.*))?;$", line)
        if m and stack:
            nodes[stack[-1]][m.group(1)] = m.group(2) or ""
    return nodes


def cells(value):
    """The 32-bit cells of a <...> value (several <...> groups concatenated)."""
    out = []
    for group in re.findall(r"<([^>]*)>", value or ""):
        out += [int(c, 0) for c in group.split()]
    return out


def strings(value):
    return re.findall(r'"([^"]*)"', value or "")


class Tree:
    def __init__(self, nodes):
        self.nodes = nodes
        self.by_phandle = {}
        for path, props in nodes.items():
            ph = cells(props.get("phandle"))
            if ph:
                self.by_phandle[ph[0]] = path

    def spec_refs(self, path, prop, cells_prop):
        vals = cells(self.nodes[path].get(prop))
        out, i = [], 0
        while i < len(vals):
            target = self.by_phandle.get(vals[i])
            if target is None:
                break
            n = cells(self.nodes[target].get(cells_prop)) or [0]
            out.append(target)
            i += 1 + n[0]
        return out

    def interrupt_parent(self, path):
        p = path
        while p:
            ph = cells(self.nodes.get(p, {}).get("interrupt-parent"))
            if ph:
                return self.by_phandle.get(ph[0])
            p = parent(p)
        return None

    def refs(self, path):
        props = self.nodes[path]
        out = []
        for prop, cp in SPEC.items():
            if prop in props:
                out += self.spec_refs(path, prop, cp)
        for prop in props:
            if prop == "gpios" or prop.endswith("-gpios") or prop.endswith("-gpio"):
                out += self.spec_refs(path, prop, "#gpio-cells")
            if prop.endswith("-supply") or prop in ("phy-handle", "mmc-pwrseq") or \
                    re.match(r"pinctrl-\d+$", prop):
                out += [self.by_phandle[c] for c in cells(props[prop]) if c in self.by_phandle]
        if "interrupts" in props:
            ip = self.interrupt_parent(path)
            if ip:
                out.append(ip)
        return out

    def device(self, path):
        """The node itself if it has a compatible, else its nearest ancestor
        that has one (pin configurations live under their controller)."""
        p = path
        while p and "compatible" not in self.nodes.get(p, {}):
            p = parent(p)
        return p


def parent(path):
    if path in ("/", ""):
        return ""
    p = path.rsplit("/", 1)[0]
    return p or "/"


def built_objects(build):
    objs = set()
    for root, _dirs, files in os.walk(build):
        for f in files:
            if f.endswith(".o") and not f.endswith(".mod.o"):
                objs.add(os.path.relpath(os.path.join(root, f), build))
    modules = set()
    order = os.path.join(build, "modules.order")
    if os.path.exists(order):
        for line in open(order):
            # A module lists its composite object; its parts are not built in.
            mod = line.strip()
            if mod:
                modules.add(mod[:-3] + ".o" if mod.endswith(".ko") else mod)
    return objs, modules


def drivers_for(src, compat, cache):
    """Source files (relative to src) that name compat in quotes."""
    if compat not in cache:
        r = subprocess.run(["grep", "-rlF", "--include=*.c", f'"{compat}"',
                            "drivers", "kernel/dma"], cwd=src, capture_output=True, text=True)
        cache[compat] = sorted(r.stdout.split())
    return cache[compat]


def check(dtc, build, src, dtb, want, missing=()):
    text = subprocess.run([dtc, "-q", "-I", "dtb", "-O", "dts", dtb],
                          capture_output=True, text=True, check=True).stdout
    tree = Tree(parse_dts(text))
    objs, modules = built_objects(build)
    objs -= set(missing)
    cache = {}
    seen, todo, failed = set(), [], 0
    for w in [w for w in want if w.startswith("obj:")]:
        # A driver that matches by bus ID rather than by device tree (the
        # VL805 xHCI on PCIe): its object must be built in.
        o = w[4:]
        if o in objs and o not in modules:
            print(f"ok   {o}: built in")
        else:
            print(f"FAIL {o}: not built in")
            failed += 1
    want = [w for w in want if not w.startswith("obj:")]
    for w in want:
        if w not in tree.nodes:
            print(f"FAIL {w}: no such node in {os.path.basename(dtb)}")
            failed += 1
        else:
            todo.append(w)
    wanted = set(todo)
    visited = set()
    while todo:
        path = todo.pop(0)
        if path in visited:
            continue
        visited.add(path)
        # A node without a compatible (a PCI device node, pin configuration)
        # is probed through its nearest ancestor with one, but may still refer
        # to what it needs (the VL805's reset).
        if path in tree.nodes and "compatible" not in tree.nodes[path]:
            todo += tree.refs(path)
        dev = tree.device(path)
        if not dev or dev in seen:
            continue
        seen.add(dev)
        props = tree.nodes[dev]
        if props.get("status", '"okay"').strip('"') not in ("okay", "ok"):
            # A disabled node a driver refers to (a clock parent, say) is
            # absent, which its users allow; a node asked for must be there.
            if dev in wanted:
                print(f"FAIL {dev}: disabled")
                failed += 1
            else:
                print(f"--   {dev}: disabled, referred to")
            continue
        todo += tree.refs(dev)
        if dev != "/":
            todo.append(parent(dev))
        compats = [c for c in strings(props.get("compatible")) if c not in CORE]
        if dev == "/" or not compats:
            continue
        found = None
        for c in compats:
            for f in drivers_for(src, c, cache):
                o = f[:-2] + ".o"
                if o in objs and o not in modules:
                    found = (c, o)
                    break
            if found:
                break
        if found:
            print(f"ok   {dev}: {found[0]} -> {found[1]}")
        else:
            print(f"FAIL {dev}: no built-in driver for {', '.join(compats)}")
            failed += 1
    return failed


def main(argv):
    selftest = argv[:1] == ["--selftest"]
    if selftest:
        argv = argv[1:]
    if len(argv) < 5:
        sys.stderr.write(__doc__)
        return 2
    dtc, build, src, dtb, *want = argv
    if not selftest:
        return 1 if check(dtc, build, src, dtb, want) else 0
    # The check passes as built; with the SD controller's driver left out it
    # must fail, for the SD controller alone.
    gone = "drivers/mmc/host/sdhci-iproc.o"
    import io
    import contextlib
    runs = []
    for missing in ((), (gone,)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            check(dtc, build, src, dtb, want, missing=missing)
        runs.append([ln for ln in out.getvalue().splitlines() if ln.startswith("FAIL")])
    print("selftest: as built: " + ("; ".join(runs[0]) or "no failure"))
    print(f"selftest: without {gone}: " + ("; ".join(runs[1]) or "no failure"))
    ok = not runs[0] and runs[1] and all("/mmc@" in ln for ln in runs[1])
    print("selftest: " + ("the missing driver is caught" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
