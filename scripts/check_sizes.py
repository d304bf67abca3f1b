"""Checks the sizes of src/'s files and functions against the limits of CONVENTIONS.md.

Usage: scripts/check-sizes [ROOT]          (ROOT: the source tree, by default this script's tree)
       scripts/check-sizes --list [ROOT]   prints every item over a limit, in the format of
                                           scripts/size-exceptions.txt
scripts/check-sizes runs this file with python3.

Limits: a .cc or .h file under src/ has at most 800 lines; a function defined in a .cc file
has at most 80, counted from the first line of its signature to its closing brace. A function
is found the way clang-format lays it out: its signature starts at column 0 (not a comment,
preprocessor line, namespace, class, struct, enum or union) and its body ends at the next line
starting with `}`. It is named by the qualified name before its first `(` (a second definition
of that name in the same file is NAME#2), so that edits elsewhere do not rename it.

scripts/size-exceptions.txt lists the items over a limit today, one a line:
  file PATH LINES
  function PATH:NAME LINES
Fails (exit 1), naming file:line and the count, when an item not listed is over its limit, when
a listed item has grown beyond its listed count, or when a listed item has shrunk or is gone
(the list must then be lowered, so that it only goes down). Exit 2 when the list cannot be read.
"""

import os
import re
import sys

FILE_LIMIT = 800
FUNCTION_LIMIT = 80
EXCEPTIONS = "scripts/size-exceptions.txt"
NOT_FUNCTIONS = ("namespace", "class", "struct", "enum", "union", "extern", "using", "typedef")
NAME = re.compile(r"([A-Za-z_~][\w:~]*(?:operator\s*\S+?)?)\s*$")


def source_files(src):
    for folder, subfolders, files in os.walk(src):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                yield os.path.relpath(os.path.join(folder, name), os.path.dirname(src))


def function_name(signature):
    """The qualified name before the first `(`, or None for what is no function (a variable
    initialised with braces, a lambda assigned at namespace scope)."""
    head = signature.split("(", 1)[0]
    if "(" not in signature or "=" in head.replace("operator==", "").replace("operator=", ""):
        return None
    m = NAME.search(head)
    return m.group(1) if m else None


def functions(lines):
    """Yields (name, first line number, length) for each function defined in `lines`."""
    start, signature, i = None, "", 0
    while i < len(lines):
        text = lines[i]
        top = text[:1] not in ("", " ", "\t", "}", "#", "/") and not text.startswith(NOT_FUNCTIONS)
        if start is None and top:
            start, signature = i, ""
        if start is not None:
            code = text.split("//", 1)[0].rstrip()
            signature += " " + code
            if code.endswith((";", "}")) or text.startswith(("}", "#")):  # ends on its line
                start = None
            elif code.endswith("{"):
                end = i + 1
                while end < len(lines) and not lines[end].startswith("}"):
                    end += 1
                name = function_name(signature)
                if name:
                    yield name, start + 1, end - start + 1
                start, i = None, end
        i += 1


def measure(root):
    """{key: (where, lines)} for each file and .cc function over its limit, key as in the list."""
    found = {}
    for path in source_files(os.path.join(root, "src")):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > FILE_LIMIT:
            found[f"file {path}"] = (path, len(lines))
        if not path.endswith(".cc"):
            continue
        seen = {}
        for name, line, length in functions(lines):
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = f"{name}#{seen[name]}"
            if length > FUNCTION_LIMIT:
                found[f"function {path}:{name}"] = (f"{path}:{line}", length)
    return found


def read_exceptions(path):
    """{key: (listed lines, line number in the list)}."""
    listed = {}
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            words = text.split()
            if not words or words[0].startswith("#"):
                continue
            if len(words) != 3 or words[0] not in ("file", "function") or not words[2].isdigit():
                raise ValueError(f"{path}:{number}: expected `file PATH LINES` or "
                                 "`function PATH:NAME LINES`")
            key = f"{words[0]} {words[1]}"
            if key in listed:
                raise ValueError(f"{path}:{number}: {key} listed twice")
            listed[key] = (int(words[2]), number)
    return listed


def compare(found, listed):
    errors = []
    for key, (where, count) in sorted(found.items()):
        kind, limit = key.split()[0], FILE_LIMIT if key.startswith("file") else FUNCTION_LIMIT
        what = f"{where}: {kind}" + ("" if kind == "file" else f" {key.split(':', 1)[1]}")
        if key not in listed:
            errors.append(f"{what} is {count} lines, over the limit of {limit}")
        elif count > listed[key][0]:
            errors.append(f"{what} is {count} lines, grown beyond the {listed[key][0]} listed "
                          f"at {EXCEPTIONS}:{listed[key][1]}")
        elif count < listed[key][0]:
            errors.append(f"{what} is {count} lines, down from the {listed[key][0]} listed: "
                          f"update {EXCEPTIONS}:{listed[key][1]}")
    for key, (count, number) in sorted(listed.items()):
        if key not in found:
            errors.append(f"{EXCEPTIONS}:{number}: {key} is gone or within its limit now: "
                          f"update {EXCEPTIONS}")
    return errors


def main(args):
    listing = "--list" in args
    args = [a for a in args if a != "--list"]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..")
    found = measure(root)
    if listing:
        for key, (_, count) in sorted(found.items()):
            print(f"{key} {count}")
        return 0
    try:
        listed = read_exceptions(os.path.join(root, EXCEPTIONS))
    except (OSError, ValueError) as e:
        print(f"check-sizes: {e}", file=sys.stderr)
        return 2
    errors = compare(found, listed)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check-sizes: {len(errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"check-sizes: {len(listed)} listed debts, nothing new over the limits: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
