"""Checks src/'s includes against the layer diagram in docs/architecture.md.

Usage: scripts/check-layers [ROOT]   (ROOT: the source tree, by default this script's tree;
scripts/check-layers runs this file with python3)

The diagram is the fenced block tagged `layers`: one layer a line, its folder under src/
followed by the layers it may include; `#` starts a comment. A line
`circle: A -> B` names a known include circle's include of module B by module A (paths under
src/ without suffix), left out of the circle check until the circle is broken. A layer may include itself and
every layer it reaches through those lists (dependencies point downward only). A file belongs
to the longest layer folder holding it; files directly in src/ (main.cc) belong to none and
are not checked.

Fails (exit 1), naming file:line and the include, when
  - an `#include "x/..."` naming a folder of src/ reaches a layer its own may not include,
    or a file that does not exist;
  - files include each other in a circle (a header and its .cc count as one: a.cc including
    b.h while b.cc includes a.h is a circle; so does a private header a_internal.h), other
    than through a `circle:` line's include;
  - a `circle:` line names an include that no longer exists;
  - a folder of src/ holding .h or .cc files is not in the diagram, or a layer in it has no
    folder; or the diagram's own layers depend on each other in a circle.
Exit 2 when the diagram cannot be read.
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".h", ".cc")


def read_diagram(doc_path):
    """Returns ({layer: [direct deps]}, {layer: line number}, {(module, module): line number})
    from the `layers` block."""
    deps, lines, known_circles = {}, {}, {}
    inside = False
    with open(doc_path, encoding="utf-8") as doc:
        for number, text in enumerate(doc, 1):
            stripped = text.strip()
            if not inside:
                inside = stripped == "```layers"
                continue
            if stripped == "```":
                return deps, lines, known_circles
            words = stripped.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] == "circle:":
                if len(words) != 4 or words[2] != "->":
                    raise ValueError(f"{doc_path}:{number}: expected circle: A -> B")
                known_circles[(words[1], words[3])] = number
                continue
            layer = words[0].rstrip("/")
            if layer in deps:
                raise ValueError(f"{doc_path}:{number}: layer {layer} listed twice")
            deps[layer] = [w.rstrip("/") for w in words[1:]]
            lines[layer] = number
    raise ValueError(f"{doc_path}: no closed ```layers block")


def source_files(src):
    for folder, subfolders, files in os.walk(src):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(folder, name), src)


def layer_of(path, layers):
    """The longest layer whose folder holds `path` (relative to src/), or None."""
    folder = os.path.dirname(path)
    best = None
    for layer in layers:
        if (folder == layer or folder.startswith(layer + "/")) and (
            best is None or len(layer) > len(best)
        ):
            best = layer
    return best


def module_of(path):
    """A file's module: its path without suffix, a private header X_internal.h counting as
    part of X (the files a split-up X.cc is made of share it)."""
    module = os.path.splitext(path)[0]
    return module[: -len("_internal")] if module.endswith("_internal") else module


def find_cycle(graph):
    """One circle of `graph` ({node: set(nodes)}) as a list of nodes, or None (iterative DFS)."""
    state = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path, iters = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(graph.get(nxt, ()))))
    return None


def reachable(deps):
    """{layer: every layer it may include}, itself included."""
    allowed = {}
    for layer in deps:
        seen, todo = {layer}, list(deps[layer])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(deps.get(d, ()))
        allowed[layer] = seen
    return allowed


def check_diagram(deps, lines, src, doc, errors):
    folders = {os.path.dirname(f) for f in source_files(src)} - {""}
    for layer in sorted(deps):
        if not os.path.isdir(os.path.join(src, layer)):
            errors.append(f"{doc}:{lines[layer]}: layer {layer} has no folder src/{layer}")
        for d in deps[layer]:
            if d not in deps:
                errors.append(f"{doc}:{lines[layer]}: {layer} may include {d}, not a layer")
    for folder in sorted(folders - set(deps)):
        errors.append(f"src/{folder}: folder not in the layer diagram of {doc}")
    cycle = find_cycle({layer: set(ds) for layer, ds in deps.items()})
    if cycle:
        errors.append(f"{doc}: the layers depend on each other in a circle: {' -> '.join(cycle)}")


def check_includes(deps, src, errors):
    allowed = reachable(deps)
    top = {name for name in os.listdir(src) if os.path.isdir(os.path.join(src, name))}
    modules = {}  # module (path without suffix) -> {included module: "file:line: #include"}
    for path in source_files(src):
        own = layer_of(path, deps)
        edges = modules.setdefault(module_of(path), {})
        with open(os.path.join(src, path), encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                m = INCLUDE.match(text)
                if not m or m.group(1).split("/", 1)[0] not in top:
                    continue
                target = m.group(1)
                where = f"src/{path}:{number}: #include \"{target}\""
                if not os.path.isfile(os.path.join(src, target)):
                    errors.append(f"{where}: no such file under src/")
                    continue
                to = layer_of(target, deps)
                if own is not None and to is not None and to not in allowed.get(own, {own}):
                    errors.append(f"{where}: layer {own} may not include layer {to}")
                module = module_of(target)
                if module != module_of(path):
                    edges.setdefault(module, where)
    return modules


def report_include_circles(modules, known_circles, doc, errors, most=20):
    """Each circle found, with the include behind each step; the closing include of a circle
    reported is then set aside, so that the next search finds another one."""
    graph = {m: set(e) for m, e in modules.items()}
    for (a, b), number in sorted(known_circles.items()):
        if b not in graph.get(a, ()):
            errors.append(f"{doc}:{number}: circle: {a} -> {b}: {a} no longer includes {b}")
        else:
            graph[a].discard(b)
    for _ in range(most):
        cycle = find_cycle(graph)
        if not cycle:
            return
        steps = [modules[a][b] for a, b in zip(cycle, cycle[1:])]
        errors.append("include circle: " + " -> ".join(cycle) + "\n  " + "\n  ".join(steps))
        graph[cycle[-2]].discard(cycle[-1])


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    src = os.path.join(root, "src")
    doc = os.path.join(root, "docs", "architecture.md")
    try:
        deps, lines, known_circles = read_diagram(doc)
    except (OSError, ValueError) as e:
        print(f"check-layers: {e}", file=sys.stderr)
        return 2
    if not deps:
        print(f"check-layers: {doc}: the layers block is empty", file=sys.stderr)
        return 2
    doc = os.path.relpath(doc, root)
    errors = []
    check_diagram(deps, lines, src, doc, errors)
    modules = check_includes(deps, src, errors)
    report_include_circles(modules, known_circles, doc, errors)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check-layers: {len(errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"check-layers: {len(deps)} layers, {len(modules)} modules: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
