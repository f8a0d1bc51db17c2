#!/usr/bin/env python3
"""tests/layering_check.py — the module picture of docs/architecture.md, enforced on the includes.

Every #include "<module>/..." in a module's sources must name the module itself or one it may use
(MAY_USE below, the table of docs/architecture.md): an include that runs back up, or sideways into a
module not listed, fails. CUDA headers (<cuda*.h>, <cublas*.h>, <mma.h>, ...) may appear only in
kernels/, and there only in *.cu / *.cuh files or in a cuda/ folder, so everything else builds
without nvcc. Sources under tests/, bench/ and examples/ sit above every module and are not checked.
Also prints the size of each module (lines of its sources) and of its largest file, and fails when a
module holds more than MAX_MODULE_SHARE of the code (a warning) or a source file has more than
MAX_FILE_LINES (a failure).

Usage: layering_check.py SOURCE_DIR        exit 0: clean; 1: violations, one line each.
"""
import os
import re
import sys

# The modules, lowest first, and what each may include besides itself.
MAY_USE = {
    "base": [],
    "oracle": ["base"],
    "results": ["base", "oracle"],
    "generators": ["base", "oracle"],
    "kernels": ["base", "oracle", "generators"],
    "plugin": ["base", "oracle", "generators", "kernels"],
    "suites": ["base", "oracle", "results", "generators", "kernels", "plugin"],
    "reports": ["base", "oracle", "results"],
    "cli": ["base", "oracle", "results", "generators", "kernels", "plugin", "suites", "reports"],
    "python": ["base", "oracle", "results", "generators", "kernels", "plugin", "suites", "reports"],
}
# The parts of suites/ (docs/architecture.md, "suites/"), lowest first, and which parts each may include besides
# itself. Every operation is a folder of its own under ops/, and no operation includes another's (ops/* stands for
# every ops/<name>); the top of suites/ (operations.cpp, the list of operations) may include every part.
SUITES_PARTS = {
    "verdict/emulate": [],
    "verdict": ["verdict/emulate"],
    "run": ["verdict", "verdict/emulate"],
    "reveal": ["run", "verdict", "verdict/emulate"],
    "mutation": ["run", "verdict", "verdict/emulate"],
    "ops/*": ["run", "verdict", "verdict/emulate", "reveal", "mutation"],
    "experiments": ["run", "verdict", "verdict/emulate", "reveal", "mutation", "ops/*"],
    "audit": ["run", "verdict", "verdict/emulate", "mutation", "ops/*"],
    "diagnose": ["run", "verdict", "verdict/emulate", "mutation", "ops/*", "audit"],
    "": ["run", "verdict", "verdict/emulate", "reveal", "mutation", "ops/*", "experiments"],
}
SUITES_INCLUDE = re.compile(r'^\s*#\s*include\s*"suites/([^"]*)/[^/"]*"')
MAX_FOLDER_FILES = 25  # source files directly in one folder
# Modules whose folders are held to MAX_FOLDER_FILES: every one (cli/cmd/ holds the subcommands, oracle/convert/,
# oracle/block/ and oracle/order/ the conversion, block-format and order parts, reports/html/ the HTML report).
FOLDER_LIMIT_ENFORCED = ("suites", "kernels", "plugin", "results", "generators", "base", "oracle", "reports", "cli")


def suites_part(folder):
    """The part of suites/ a folder (relative to suites/, '' for the top) belongs to, or None."""
    if folder.startswith("ops/") and folder.count("/") == 1:
        return "ops/*"
    if folder.startswith("ops/"):
        return suites_part("/".join(folder.split("/")[:2]))
    return folder if folder in SUITES_PARTS else None


SOURCE_EXT = (".hpp", ".cpp", ".h", ".c", ".cu", ".cuh")
CUDA_HEADER = re.compile(r"^\s*#\s*include\s*<(cuda|cublas|cufft|curand|cusparse|nvrtc|nvml|mma\.h|cooperative_groups|cub/|thrust/|cutlass/)")
PROJECT_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)/[^"]*"')
MAX_MODULE_SHARE = 0.25
MAX_FILE_LINES = 700  # "about 600": a file a little over is a warning, well over is a failure
WARN_FILE_LINES = 600
# A source file over MAX_FILE_LINES fails the check. A module over MAX_MODULE_SHARE is reported, not
# failed: kernels/ holds every kernel, CPU model and CUDA kernel side by side (docs/architecture.md,
# "Sizes"), and splitting it by size alone would separate a kernel from its model.
ENFORCE_FILE_SIZES = True
ENFORCE_MODULE_SHARE = False


def acyclic(graph):
    state = {}

    def visit(n):
        if state.get(n) == 1:
            return False
        if state.get(n) == 2:
            return True
        state[n] = 1
        ok = all(visit(m) for m in graph[n])
        state[n] = 2
        return ok

    return all(visit(n) for n in graph)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems, warnings = [], []
    if not acyclic(MAY_USE):
        problems.append("MAY_USE has a cycle")
    sizes, largest = {}, {}
    for module, allowed in MAY_USE.items():
        mdir = os.path.join(root, module)
        if not os.path.isdir(mdir):
            problems.append(f"{module}/: missing")
            continue
        sizes[module] = 0
        largest[module] = ("", 0)
        for dirpath, _, files in os.walk(mdir):
            nsrc = sum(1 for f in files if f.endswith(SOURCE_EXT))
            if nsrc > MAX_FOLDER_FILES:
                (problems if module in FOLDER_LIMIT_ENFORCED else warnings).append(f"{os.path.relpath(dirpath, root)}/: {nsrc} source files directly in it (at most {MAX_FOLDER_FILES})")
            for name in sorted(files):
                if not name.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    lines = f.read().split("\n")
                n = len(lines) - (1 if lines and lines[-1] == "" else 0)
                sizes[module] += n
                if n > largest[module][1]:
                    largest[module] = (rel, n)
                if n > MAX_FILE_LINES:
                    (problems if ENFORCE_FILE_SIZES else warnings).append(f"{rel}: {n} lines (a source file holds at most about {WARN_FILE_LINES})")
                elif n > WARN_FILE_LINES:
                    warnings.append(f"{rel}: {n} lines (about {WARN_FILE_LINES} at most)")
                cuda_ok = module == "kernels" and (name.endswith((".cu", ".cuh")) or "/cuda/" in "/" + rel.replace(os.sep, "/"))
                for i, line in enumerate(lines, 1):
                    m = PROJECT_INCLUDE.match(line)
                    if m:
                        target = m.group(1)
                        if target == "tests":
                            problems.append(f"{rel}:{i}: {module}/ includes a test header: {line.strip()}")
                        elif target in MAY_USE and target != module and target not in allowed:
                            problems.append(f"{rel}:{i}: {module}/ may not use {target}/ "
                                            f"(it may use: {', '.join(allowed) or 'nothing'}): {line.strip()}")
                    sm = SUITES_INCLUDE.match(line) if module == "suites" else None
                    if sm:
                        here_folder = os.path.relpath(dirpath, mdir).replace(os.sep, "/")
                        here_folder = "" if here_folder == "." else here_folder
                        here, there = suites_part(here_folder), suites_part(sm.group(1))
                        if here is None or there is None:
                            problems.append(f"{rel}:{i}: suites/ folder not in SUITES_PARTS: {line.strip()}")
                        elif there == "ops/*" and here == "ops/*" and sm.group(1).split("/")[:2] != here_folder.split("/")[:2]:
                            problems.append(f"{rel}:{i}: one operation includes another's folder: {line.strip()}")
                        elif there != here and there not in SUITES_PARTS[here]:
                            problems.append(f"{rel}:{i}: suites/{here or '(top)'} may not use suites/{there} "
                                            f"(it may use: {', '.join(SUITES_PARTS[here]) or 'nothing'}): {line.strip()}")
                    if CUDA_HEADER.match(line) and not cuda_ok:
                        problems.append(f"{rel}:{i}: a CUDA header outside kernels/ *.cu, *.cuh or cuda/ folders: {line.strip()}")
    total = sum(sizes.values()) or 1
    for module, n in sizes.items():
        print(f"{module:11s} {n:6d} lines  {100.0 * n / total:5.1f} %   largest file {largest[module][0]} ({largest[module][1]})")
        if n > MAX_MODULE_SHARE * total:
            (problems if ENFORCE_MODULE_SHARE else warnings).append(f"{module}/: {n} of {total} lines ({100.0 * n / total:.1f} %), more than {100 * MAX_MODULE_SHARE:.0f} %")
    print(f"{'total':11s} {total:6d} lines")
    for w in warnings:
        print("warning:", w)
    for p in problems:
        print("layering:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
