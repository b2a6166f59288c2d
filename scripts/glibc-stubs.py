#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""glibc-stubs.py - link-time stub libraries that hold the agent to a glibc floor.

The agent is built on a new glibc (Debian 12: 2.36) but must start on every
glibc from 2.17 on. A normal link binds each import to the *default* version
of the symbol in the build machine's libc (dlopen@GLIBC_2.34, stat@GLIBC_2.33,
...), and an older libc refuses to start the program. Linking against glibc
2.17 itself would have bound each import to the newest version of that symbol
that existed in 2.17. This script reproduces that choice without an old
sysroot: it writes the assembly source and version script of stub shared
objects that the agent is linked against instead of the real libc.

Inputs:
  --libc LIB       the target's real libc.so.6: its dynamic symbol table gives,
                   for each symbol, every version it is defined at, its type
                   (function or object) and, for objects, its size.
  --imports BIN    a first, normal link of the agent: its undefined dynamic
                   symbols are what the agent imports.
  --compat OBJ     the agent's compat object (compat/glibc_compat.o): the global
                   symbols it defines are wrappers for imports that have no
                   version at or below the floor (they are resolved inside the
                   agent and need no stub); the symbols it leaves undefined are
                   imported too (__real_X stands for X, see ld --wrap).
  --floor 2.17     the oldest glibc the agent must start on.

For each import the stub declares the HIGHEST version of the symbol in the real
libc that is not above the floor (memcpy@GLIBC_2.14, not the older
memcpy@GLIBC_2.2.5 compat entry; pthread_cond_wait@GLIBC_2.3.2), as the default
(@@) version, so the linker binds the import to it. Objects (stdout, environ,
optind, ...) are stubbed as objects of the real size, because the executable
gets a copy relocation sized from the stub. An import with no version at or
below the floor and no wrapper in the compat object stops the build with a
message naming it.

A few symbols live in the dynamic linker, not in libc (__stack_chk_guard on
aarch64, __tls_get_addr on x86_64): the ld.so that libc.so.6 names in its
DT_NEEDED, found beside it, is read as well and gets a stub of its own, as
libc.so's AS_NEEDED clause gives it to an ordinary link.

Up to glibc 2.33 the dl* functions lived in libdl.so.2 and the pthread_*
functions in libpthread.so.0 (2.34 folded both into libc.so.6 and left
placeholder libraries that still define the old version names). The stubs
attribute each import to the library that held it then, and the agent is
linked with all three (--no-as-needed) so that an old glibc loads libdl and
libpthread. ld.so matches a versioned symbol by name and version in every
loaded library, so the attribution only shows in `readelf -V`.

Outputs in --out DIR: for each stub BASE (libc, libdl, libpthread, ld) BASE.S
and BASE.map, its source and version script; sonames, one line "BASE SONAME"
per stub (libc libc.so.6, ..., ld ld-linux-x86-64.so.2); and imports.txt, one
line per import: name, version, library, or "wrapper".
Exit status 1, with the reasons on stderr, when the floor cannot be kept.
"""
import argparse
import os
import re
import subprocess
import sys

# Functions that were in libdl.so.2 up to glibc 2.33.
LIBDL = {"dlopen", "dlclose", "dlsym", "dlvsym", "dlerror", "dladdr", "dladdr1", "dlinfo", "dlmopen"}

# The stub libraries and the sonames they stand for; "ld" gets the soname of
# the target's dynamic linker.
STUBS = {"libc": "libc.so.6", "libdl": "libdl.so.2", "libpthread": "libpthread.so.0", "ld": None}


def library_of(name, ldso):
    if name in ldso:
        return "ld"
    if name in LIBDL:
        return "libdl"
    if name.startswith("pthread_") or name.startswith("sem_"):
        return "libpthread"
    return "libc"


def glibc_version(v):
    """'GLIBC_2.3.2' -> (2, 3, 2); None for anything else (GLIBC_PRIVATE, ...)."""
    m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)+)", v)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def read_symbols(readelf, path, dynamic):
    """Symbol table rows of PATH: dicts with name, version, default, size, type, bind, ndx."""
    flag = "--dyn-syms" if dynamic else "--syms"
    text = subprocess.run([readelf, flag, "-W", path], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(":") or not f[0][:-1].isdigit():
            continue
        full = f[7]
        name, sep, version = full.partition("@")
        default = version.startswith("@")
        version = version.lstrip("@")
        size = int(f[2], 0)
        rows.append({"name": name, "version": version, "default": default, "size": size,
                     "type": f[3], "bind": f[4], "ndx": f[6], "value": int(f[1], 16)})
    return rows


def read_needed(readelf, path):
    text = subprocess.run([readelf, "-d", "-W", path], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", text)


def version_table(readelf, path):
    """name -> [(version tuple, version text, row)] of the symbols PATH defines."""
    table = {}
    for r in read_symbols(readelf, path, True):
        vt = glibc_version(r["version"])
        if r["ndx"] == "UND" or vt is None:
            continue
        table.setdefault(r["name"], []).append((vt, r["version"], r))
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readelf", default="readelf")
    ap.add_argument("--libc", required=True)
    ap.add_argument("--imports", required=True)
    ap.add_argument("--compat", required=True)
    ap.add_argument("--floor", default="2.17")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    floor = tuple(int(x) for x in args.floor.split("."))

    libc = version_table(args.readelf, args.libc)
    ldso = {}
    for needed in read_needed(args.readelf, args.libc):
        if needed.startswith("ld"):
            STUBS["ld"] = needed
            ldso = version_table(args.readelf, os.path.join(os.path.dirname(args.libc), needed))
    # A symbol in both (none today) is libc's, as the link order has it.
    ldso = {n: d for n, d in ldso.items() if n not in libc}
    libc.update(ldso)

    # What the agent imports: its undefined symbols, and the objects it took
    # by copy relocation (defined in its .bss, but versioned: stdout@GLIBC_2.2.5).
    # Strong imports must be found; weak ones (__gmon_start__, _ITM_*) may stay
    # unresolved as they do in any program.
    imports = {}
    for r in read_symbols(args.readelf, args.imports, True):
        if r["name"] and (r["ndx"] == "UND" or r["version"]):
            imports[r["name"]] = r["bind"] == "WEAK"

    wrappers = set()
    for r in read_symbols(args.readelf, args.compat, False):
        if r["bind"] not in ("GLOBAL", "WEAK") or not r["name"]:
            continue
        if r["ndx"] != "UND":
            wrappers.add(r["name"])
            continue
        name = r["name"][len("__real_"):] if r["name"].startswith("__real_") else r["name"]
        # Symbols of the link itself (_init, __init_array_start) are not libc's.
        if name in libc:
            imports.setdefault(name, False)

    chosen = {}  # name -> (version text, row)
    errors = []
    report = []
    for name in sorted(imports):
        if name in wrappers:
            report.append(f"{name} - wrapper")
            continue
        defs = libc.get(name)
        if not defs:
            if not imports[name]:
                errors.append(f"{name}: not defined by {args.libc}")
            continue
        ok = [d for d in defs if d[0] <= floor]
        if not ok:
            newest = max(defs)[1]
            errors.append(f"{name}: needs {newest}, and has no version at or below GLIBC_{args.floor} in "
                          f"{args.libc}; give it a wrapper in compat/glibc_compat.c")
            continue
        vt, vtext, row = max(ok, key=lambda d: d[0])
        if row["type"] not in ("FUNC", "IFUNC", "OBJECT"):
            errors.append(f"{name}@{vtext}: a {row['type']} symbol cannot be stubbed")
            continue
        chosen[name] = (vtext, row)
        report.append(f"{name} {vtext} {STUBS[library_of(name, ldso)]}")

    # A copied object must keep the aliases it has in libc (environ and
    # __environ are one variable): ld then exports them from the executable at
    # the copy's address, and libc's own references (it sets __environ at
    # start-up) land in the copy the agent reads. Distinct stub objects would
    # leave the agent's environ empty.
    for name in sorted(n for n in chosen if chosen[n][1]["type"] == "OBJECT"):
        row = chosen[name][1]
        if row.get("alias_of"):
            continue
        for other, defs in libc.items():
            if other == name or library_of(other, ldso) != library_of(name, ldso):
                continue
            same = [d for d in defs if d[0] <= floor and d[2]["type"] == "OBJECT"
                    and d[2]["value"] == row["value"]]
            if same:
                vt, vtext, orow = max(same, key=lambda d: d[0])
                chosen[other] = (vtext, dict(orow, alias_of=name))
                report.append(f"{other} {vtext} {STUBS[library_of(other, ldso)]} alias of {name}")

    if errors:
        for e in errors:
            print(f"glibc-stubs: {e}", file=sys.stderr)
        print(f"glibc-stubs: the agent would not start on glibc {args.floor}", file=sys.stderr)
        return 1

    os.makedirs(args.out, exist_ok=True)
    sonames = []
    for stub, soname in STUBS.items():
        if soname is None:
            print(f"glibc-stubs: {args.libc} names no dynamic linker", file=sys.stderr)
            return 1
        names = sorted(n for n in chosen if library_of(n, ldso) == stub)
        write_stub(os.path.join(args.out, stub), soname, names, chosen)
        sonames.append(f"{stub} {soname}")
    with open(os.path.join(args.out, "sonames"), "w") as f:
        f.write("\n".join(sonames) + "\n")
    with open(os.path.join(args.out, "imports.txt"), "w") as f:
        f.write("\n".join(report) + "\n")
    return 0


def write_stub(base, soname, names, chosen):
    """BASE.S (one empty function or zeroed object of the real size per symbol)
    and BASE.map (a version node per version, each symbol in the node chosen
    for it, so that the stub's default version is the chosen one)."""
    asm = [f"/* Link-time stub of {soname}, written by scripts/glibc-stubs.py. Never loaded. */"]
    for n in names:
        row = chosen[n][1]
        if row.get("alias_of"):
            continue
        if row["type"] == "OBJECT":
            size = max(row["size"], 1)
            asm += ["\t.data", "\t.balign 16"]
            # The binding too: ld gives a copied weak object (environ) the
            # address of its strong alias (__environ) only when it sees them so.
            for a in [n] + [m for m in names if chosen[m][1].get("alias_of") == n]:
                bind = ".weak" if chosen[a][1]["bind"] == "WEAK" else ".globl"
                asm += [f"\t{bind} {a}", f"\t.type {a}, %object", f"\t.size {a}, {size}", f"{a}:"]
            asm.append(f"\t.zero {size}")
        else:
            asm += ["\t.text", f"\t.globl {n}", f"\t.type {n}, %function", f"{n}:", "\t.byte 0",
                    f"\t.size {n}, 1"]
    asm.append("\t.section .note.GNU-stack,\"\",%progbits")
    with open(base + ".S", "w") as f:
        f.write("\n".join(asm) + "\n")

    by_version = {}
    for n in names:
        by_version.setdefault(chosen[n][0], []).append(n)
    # One node per version, each inheriting the one before, as in glibc's own maps.
    nodes = []
    versions = sorted(by_version, key=glibc_version)
    for i, v in enumerate(versions):
        body = "".join(f"\t\t{n};\n" for n in by_version[v])
        local = "\tlocal:\n\t\t*;\n" if i == 0 else ""
        parent = f" {versions[i - 1]}" if i else ""
        nodes.append(f"{v} {{\n\tglobal:\n{body}{local}}}{parent};\n")
    if not nodes:
        nodes.append("GLIBC_PLACEHOLDER {\n\tlocal:\n\t\t*;\n};\n")
    with open(base + ".map", "w") as f:
        f.write("".join(nodes))


if __name__ == "__main__":
    sys.exit(main())
