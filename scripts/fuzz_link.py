#!/usr/bin/env python3
"""scripts/fuzz_link.py — build one libFuzzer target against an existing (gcc) build of fpcert.

The quick mode of scripts/fuzz.sh (what test.sh and CI use): instead of building all of fpcert a second
time under clang, ASan and UBSan, compile with clang only the files that read the target's input — the
reader itself and the fuzz target, instrumented for coverage, ASan and UBSan, asserts on — and link them
ahead of the test build's static libraries, which provide everything else (the archive members the
instrumented objects replace are then never pulled in). The flags of each file come from the test build's
compile_commands.json, the link line from its fuzz_replay_<target> executable, so both stay what CMake
says. The full mode (scripts/fuzz.sh --full) instruments every file instead, for long campaigns.

Usage: fuzz_link.py TARGET TEST_BUILD_DIR OUT_DIR CLANGXX   (prints the binary's path; exit 1 on failure)
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

# The files that parse each target's input (docs/errors.md): instrumented; the rest comes from the test build.
READERS = {
    "spec": ["generators/spec.cpp", "generators/generate.cpp"],
    "npy": ["base/npy.cpp"],
    "config": ["cli/config.cpp", "base/input_file.cpp", "kernels/order.cpp"],
    "results": ["results/results_json.cpp", "results/results.cpp", "results/conversion.cpp",
                "results/mutation.cpp", "results/reveal.cpp", "results/experiment_record.cpp"],
    "plugin": ["plugin/loader.cpp", "plugin/elf_check.cpp"],
    "options": ["cli/options.cpp", "base/output_path.cpp"],
    "plugin_load": ["cli/plugins.cpp", "plugin/loader.cpp", "plugin/elf_check.cpp", "suites/run/isolate.cpp"],
}
# Asserts are on in the instrumented files, except in the config reader: toml++ checks its parser's internal
# assumptions with TOML_ASSERT_ASSUME, an assert without NDEBUG and, with NDEBUG, __builtin_assume under
# clang but nothing under gcc. The config reader is built as the shipped (gcc, NDEBUG) build runs it: the
# assumptions are no-ops. toml++'s __builtin_unreachable stays undefined behaviour, which UBSan reports.
ASSERTS = {"config": ["-DNDEBUG", "-D__builtin_assume(x)=((void)0)"]}
SANITIZE = ["-fsanitize=fuzzer-no-link,address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
# gcc-only options of the test build that clang rejects or that must not apply here.
DROP = {"-Werror", "-Wno-restrict"}


def clang_command(entry, clang, obj, target):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [clang], False
    for i, a in enumerate(args):
        if i == 0:
            continue
        if skip:
            skip = False
            continue
        if a in ("-o", "-c"):
            skip = True
            continue
        if a == "-include" and i + 1 < len(args) and args[i + 1].endswith("cmake_pch.hxx"):
            skip = True  # a precompiled header of the test build would be gcc's: each file includes what it needs
            continue
        if a == "-Winvalid-pch":
            continue
        if a in DROP or a == entry["file"]:
            continue
        out.append(a)
    return out + SANITIZE + ["-O1", "-gline-tables-only", *ASSERTS.get(target, ["-UNDEBUG"]), "-w", "-c", entry["file"], "-o", obj]


def main():
    target, build, outdir, clang = sys.argv[1:5]
    build, outdir = os.path.abspath(build), os.path.abspath(outdir)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entries = json.load(open(os.path.join(build, "compile_commands.json")))
    replay_dir = f"fuzz_replay_{target}.dir"
    wanted = {os.path.join(root, p): None for p in READERS[target]}
    harness = None
    for e in entries:
        f = os.path.normpath(os.path.join(e.get("directory", ""), e["file"]))
        e = dict(e, file=f)
        if f in wanted and wanted[f] is None:
            wanted[f] = e
        if f.endswith(f"tests/fuzz/fuzz_{target}.cpp") and replay_dir in e.get("command", " ".join(e.get("arguments", []))):
            harness = e
    missing = [f for f, e in wanted.items() if e is None] + ([] if harness else [f"tests/fuzz/fuzz_{target}.cpp"])
    if missing:
        sys.exit(f"fuzz_link: not in {build}/compile_commands.json: {', '.join(missing)}")
    objdir = os.path.join(outdir, f"obj_{target}")
    os.makedirs(objdir, exist_ok=True)
    jobs = [(e, os.path.join(objdir, os.path.basename(f) + ".o")) for f, e in list(wanted.items()) + [("harness", harness)]]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        runs = list(pool.map(lambda j: subprocess.run(clang_command(j[0], clang, j[1], target), cwd=j[0]["directory"],
                                                      capture_output=True, text=True), jobs))
    for (e, _), r in zip(jobs, runs):
        if r.returncode != 0:
            sys.exit(f"fuzz_link: compiling {e['file']} failed:\n{r.stderr[-4000:]}")
    # The replay executable's link line: its objects are replaced by ours, its libraries kept.
    link_dir = os.path.join(build, "tests", "fuzz")
    link = shlex.split(open(os.path.join(link_dir, "CMakeFiles", replay_dir, "link.txt")).read().split("\n")[0])
    o = link.index("-o")
    libs = [a for a in link[o + 2:]]
    flags = [a for a in link[1:o] if a.startswith("-") and not a.startswith("-O") and a not in DROP]
    exe = os.path.join(outdir, f"fuzz_{target}")
    cmd = [clang, *flags, "-fsanitize=fuzzer,address,undefined", *[j[1] for j in jobs], "-o", exe, *libs]
    r = subprocess.run(cmd, cwd=link_dir, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"fuzz_link: linking fuzz_{target} failed:\n{' '.join(cmd)}\n{r.stderr[-4000:]}")
    print(exe)


if __name__ == "__main__":
    main()
