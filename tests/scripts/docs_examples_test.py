#!/usr/bin/env python3
"""Runs the shell examples of docs/api.md and docs/operations.md against a daemon it starts.

A runnable example is a fenced block right after the line `<!-- doc-test -->` (invisible when
the Markdown is rendered). In it, a line starting with `$ ` is a command, lines after it that
start with blanks continue it, and the lines up to the next command are its shown output.
Each document gets its own `hetsched serve --backend virtual` on a free loopback port, in a
fresh folder; the docs' addresses (127.0.0.1:8080, 127.0.0.1:18080) become that port, and `$T`
and `$HETSCHED_TOKEN` hold the token serve writes. Each command runs in its own bash, in the
daemon's folder, in order.

Checks: every command exits 0, except one whose shown output starts with `hetsched: ` (how the
client reports an error), which must fail. A shown line that is JSON must match a line of the
output that is a JSON object with at least its keys (and, for an error, its code); any other
shown line must match an output line with numbers, and runs of blanks, free to differ. `...`
stands for lines left out.

Usage: docs_examples_test.py HETSCHED_BINARY SOURCE_DIR
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

MARKER = "<!-- doc-test -->"
DOCS = ["docs/api.md", "docs/operations.md"]
DOC_PORTS = ["127.0.0.1:8080", "127.0.0.1:18080"]
COMMAND_TIMEOUT_S = 60


def examples(path):
    """(line number, [(command, [shown output lines])]) for each runnable block of `path`."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == MARKER and i + 1 < len(lines) and lines[i + 1].startswith("```"):
            start = i + 2
            end = start
            while not lines[end].startswith("```"):
                end += 1
            out.append((start, parse_block(lines[start:end])))
            i = end
        i += 1
    return out


def parse_block(block):
    commands = []
    for line in block:
        if line.startswith("$ "):
            commands.append([line[2:], []])
        elif commands and line[:1].isspace() and not commands[-1][1]:
            commands[-1][0] += "\n" + line
        elif commands:
            commands[-1][1].append(line)
    return [(c, shown) for c, shown in commands]


def json_object(line):
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def matches_json(shown, actual_lines):
    for line in actual_lines:
        doc = json_object(line)
        if doc is None or not set(shown).issubset(doc):
            continue
        if "error" in shown and doc["error"].get("code") != shown["error"].get("code"):
            continue
        return True
    return False


def line_pattern(shown):
    """`shown` as a regex: numbers and runs of blanks may differ."""
    parts = re.split(r"(\d+(?:\.\d+)?|\s+)", shown.strip())
    pattern = ""
    for part in parts:
        if not part:
            continue
        if part.isspace():
            pattern += r"\s+"
        elif re.fullmatch(r"\d+(?:\.\d+)?", part):
            pattern += r"\d+(?:\.\d+)?"
        else:
            pattern += re.escape(part)
    return re.compile(pattern)


def check_output(shown_lines, output):
    """The shown lines that the output lacks."""
    actual = [l.strip() for l in output.split("\n")]
    missing = []
    for shown in shown_lines:
        if not shown.strip() or shown.strip() == "...":
            continue
        doc = json_object(shown)
        if doc is not None:
            if not matches_json(doc, actual):
                missing.append(shown)
        elif not any(line_pattern(shown).fullmatch(a) for a in actual):
            missing.append(shown)
    return missing


class Daemon:
    def __init__(self, binary, folder):
        self.proc = subprocess.Popen(
            [binary, "serve", "--backend", "virtual", "--listen", "127.0.0.1:0", "--db",
             os.path.join(folder, "hetsched.db")],
            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True)
        self.url = None
        deadline = time.time() + 60
        seen = ""
        fd = self.proc.stdout.fileno()
        while self.url is None and time.time() < deadline:
            # Bounded, and read from the descriptor itself (a buffered readline could hold the
            # line select waits for): a daemon that neither speaks nor exits cannot hang this.
            ready, _, _ = select.select([fd], [], [], deadline - time.time())
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk.decode(errors="replace")
            m = re.search(r"listening on (http://127\.0\.0\.1:(\d+))/", seen)
            if m:
                self.url, self.port = m.group(1), m.group(2)
        if self.url is None:
            self.stop()
            raise RuntimeError("the daemon did not say 'listening on'")
        # Its log goes on: read it so that a full pipe never blocks the daemon.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        self.token = open(os.path.join(folder, "hetsched.token")).read().strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode


def run_doc(binary, path, failures):
    folder = tempfile.mkdtemp(prefix="hetsched-docs-")
    daemon = None
    try:
        daemon = Daemon(binary, folder)
        env = dict(os.environ, T=daemon.token, HETSCHED_TOKEN=daemon.token,
                   HETSCHED_SERVER=daemon.url,
                   PATH=os.path.dirname(os.path.abspath(binary)) + os.pathsep + os.environ["PATH"])
        blocks = examples(path)
        if not blocks:
            failures.append(f"{path}: no runnable example (marked {MARKER})")
        for line_no, commands in blocks:
            for command, shown in commands:
                for port in DOC_PORTS:
                    command = command.replace(port, "127.0.0.1:" + daemon.port)
                where = f"{path}:{line_no}: $ {command.splitlines()[0]}"
                try:
                    r = subprocess.run(["bash", "-c", command], cwd=folder, env=env, text=True,
                                       capture_output=True, timeout=COMMAND_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    failures.append(f"{where}: still running after {COMMAND_TIMEOUT_S} s")
                    continue
                output = r.stdout + r.stderr
                must_fail = bool(shown) and shown[0].startswith("hetsched: ")
                if (r.returncode != 0) != must_fail:
                    failures.append(f"{where}: exit status {r.returncode}\n{output}")
                for missing in check_output(shown, output):
                    failures.append(f"{where}: output lacks\n  {missing}\ngot\n{output}")
                print(f"ran {where}")
    finally:
        if daemon is not None:
            status = daemon.stop()
            if status != 0:
                failures.append(f"{path}: the daemon exited {status} on SIGTERM")
        shutil.rmtree(folder, ignore_errors=True)


def main():
    binary, root = sys.argv[1], sys.argv[2]
    failures = []
    for doc in DOCS:
        try:
            run_doc(binary, os.path.join(root, doc), failures)
        except RuntimeError as e:
            failures.append(f"{doc}: {e}")
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
