#!/usr/bin/env python3
"""Checks that the commands, paths and links in README.md and docs/*.md are not stale.

Nothing long is run: each command is checked against what it names.

- Command blocks (```sh, ```bash, ```shell): every line is a command and must be one this
  checker knows, else it is reported. Continuation lines (`\\`) are joined; `#` comment
  lines and blank lines are skipped; `NAME=value` assignments are allowed, alone or before
  a command; `$VAR` arguments are fine.
- Usage blocks (```text or unlabelled): lines starting with `ferroflow ` or `cargo ` are
  checked like commands (indented `[--flag ...]` lines continue the line above); other
  lines (program output, layouts) are not.
- Inline code spans in prose that start with `ferroflow <subcommand>` or `cargo <sub>` are
  checked too.

What a command is checked for:

- `ferroflow ...` and `cargo run ... -p ferroflow -- ...`: the subcommand path exists
  (`ferroflow checkpoint inspect`) and every `--flag` used appears in
  `<binary> <subcommand...> --help` (the binary is $FERROFLOW_BIN, default
  target/release/ferroflow; clap prints flags as `--flag_name`).
- `cargo X`: X is build, run, test, bench, clippy or fmt; `-p NAME` names a workspace crate
  (the `[package]` name of crates/*/Cargo.toml); `--example NAME` exists (in that crate,
  or in any crate without `-p`).
- `scripts/*.sh` and other repository scripts run directly: the file exists and is
  executable; a script run by `python`/`python3`/`.venv/bin/python`: the file exists and
  every `--flag` given appears in its source (its argparse definitions).
- `pip`, `python -m pip`, `kubectl`, `tensorboard` (also as `.venv/bin/X`): repository
  files they name exist.
- In every command, an argument that is a repository path (`crates/`, `scripts/`,
  `deploy/`, `data/`, `python/`, `docs/`) must exist (globs must match). Paths under
  `target/` and `logs/` are build or run outputs and are not checked.

Also checked, in prose and tables: inline code spans that are repository paths exist (globs
must match), and relative Markdown links point at existing files and, with `#anchor`, at an
existing heading (GitHub's anchor rules).

```python blocks must parse (`ast.parse`); a block that does not parse and contains `...`
is taken as an excerpt with placeholders and skipped (reported as such). ```rust blocks are
excerpts and are not compiled here.

A command line opts out with a trailing `# not checked: <reason>` comment.

Exits 1 listing every stale command as file:line, 2 when the binary is missing, 0 when all
is well.
"""

import ast
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CARGO_SUBCOMMANDS = {"build", "run", "test", "bench", "clippy", "fmt"}
REPO_DIRS = ("crates/", "scripts/", "deploy/", "data/", "python/", "docs/")
OUTPUT_DIRS = ("target/", "logs/")
COMMAND_LANGS = {"sh", "bash", "shell"}
USAGE_LANGS = {"", "text"}
OPT_OUT = re.compile(r"\s#\s*not checked:\s*(\S.*)$")
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class Checker:
    def __init__(self, binary):
        self.binary = binary
        self.errors = []
        self.counts = {"commands": 0, "python blocks": 0, "paths": 0, "links": 0}
        self.skipped = []
        self._help = {}
        self.crates = self._crates()
        self._anchors = {}

    # ---- helpers -------------------------------------------------------------------
    def error(self, where, msg, cmd=None):
        self.errors.append(f"{where}: {msg}" + (f"\n    {cmd}" if cmd else ""))

    def _crates(self):
        crates = {}
        for toml in sorted(glob.glob(os.path.join(ROOT, "crates", "*", "Cargo.toml"))):
            section = None
            for line in open(toml, encoding="utf-8"):
                line = line.strip()
                if line.startswith("["):
                    section = line
                elif section == "[package]":
                    m = re.match(r'name\s*=\s*"([^"]+)"', line)
                    if m:
                        crates[m.group(1)] = os.path.dirname(toml)
                        break
        return crates

    def help(self, path):
        """The --help text of `ferroflow <path...>`, or None when that command does not exist."""
        key = tuple(path)
        if key not in self._help:
            try:
                r = subprocess.run([self.binary, *path, "--help"], capture_output=True, text=True,
                                   timeout=60)
                self._help[key] = r.stdout if r.returncode == 0 else None
            except (OSError, subprocess.TimeoutExpired) as e:
                sys.exit(f"check_docs: cannot run {self.binary}: {e}")
        return self._help[key]

    @staticmethod
    def subcommands(help_text):
        out, inside = set(), False
        for line in help_text.splitlines():
            if line.strip() == "Commands:":
                inside = True
            elif inside and re.match(r"^\s{2}\S", line):
                out.add(line.split()[0])
            elif inside and not line.strip():
                inside = False
        out.discard("help")
        return out

    def repo_path(self, where, arg):
        """Checks an argument that names a repository path; ignores anything else."""
        arg = arg.strip("'\",;:()[]")
        if arg.startswith("./"):
            arg = arg[2:]
        if not arg.startswith(REPO_DIRS) or "$" in arg or "<" in arg:
            return
        self.counts["paths"] += 1
        if not glob.glob(os.path.join(ROOT, arg)):
            self.error(where, f"no such file in the repository: {arg}")

    # ---- commands ------------------------------------------------------------------
    def command(self, where, line, strict):
        """Checks one command line. `strict`: an unknown command is an error (command blocks)."""
        m = OPT_OUT.search(line)
        if m:
            self.skipped.append(f"{where}: {line[:m.start()].strip()} (not checked: {m.group(1)})")
            return
        line = re.sub(r"(^|\s)#.*$", "", line).strip()  # a trailing comment
        if not line:
            return
        try:
            toks = shlex.split(line)
        except ValueError as e:
            self.error(where, f"cannot parse the command ({e})", line)
            return
        while toks and ASSIGN.match(toks[0]):  # NAME=value prefixes
            toks = toks[1:]
        if not toks:
            return
        self.counts["commands"] += 1
        for t in toks[1:]:
            self.repo_path(where, t)
        prog = toks[0]
        if prog.startswith(".venv/bin/"):
            prog = prog[len(".venv/bin/"):]
        base = os.path.basename(prog)
        if base == "ferroflow" or prog == "target/release/ferroflow":
            self.ferroflow(where, toks[1:], line, strict)
        elif prog == "cargo":
            self.cargo(where, toks[1:], line)
        elif re.fullmatch(r"python(3(\.\d+)?)?", base):
            self.python(where, toks[1:], line)
        elif base in ("pip", "pip3"):
            pass  # repository paths were checked above; target/ holds build outputs
        elif base in ("kubectl", "tensorboard"):
            pass  # the manifest / logdir arguments were checked above where in the repo
        elif "/" in prog and not prog.startswith(OUTPUT_DIRS):
            path = os.path.join(ROOT, prog[2:] if prog.startswith("./") else prog)
            if not os.path.isfile(path):
                self.error(where, f"no such script: {prog}", line)
            elif not os.access(path, os.X_OK):
                self.error(where, f"script is not executable: {prog}", line)
        elif strict:
            self.error(where, f"unknown command '{prog}' (teach scripts/check_docs.py about it, "
                              "or end the line with '# not checked: <reason>')", line)
        else:
            self.counts["commands"] -= 1

    def ferroflow(self, where, args, line, strict=True):
        path = []
        for a in args:
            if a.startswith("-"):
                break
            if a.startswith("<") or a == "...":
                return  # `ferroflow <command> --help`: a placeholder, nothing to check
            h = self.help(path)
            if h is None or a not in self.subcommands(h):
                break
            path.append(a)
        h = self.help(path)
        if h is None:
            self.error(where, f"`ferroflow {' '.join(path)} --help` failed", line)
            return
        if self.subcommands(h) and not path:
            self.error(where, "no ferroflow subcommand (or an unknown one)", line)
            return
        if self.subcommands(h):
            if strict or len(args) > len(path):  # prose may name a command group alone
                self.error(where, f"`ferroflow {' '.join(path)}` needs a subcommand", line)
            return
        known = set(FLAG.findall(h))
        for f in FLAG.findall(" ".join(args)):
            if f not in known:
                self.error(where, f"`ferroflow {' '.join(path)}` has no flag {f}", line)

    def cargo(self, where, args, line):
        if not args or args[0] not in CARGO_SUBCOMMANDS:
            self.error(where, f"cargo subcommand not one of {sorted(CARGO_SUBCOMMANDS)}", line)
            return
        sub, rest = args[0], args[1:]
        tail = []
        if "--" in rest:
            i = rest.index("--")
            rest, tail = rest[:i], rest[i + 1:]
        pkg, example = None, None
        i = 0
        while i < len(rest):
            a = rest[i]
            val = rest[i + 1] if i + 1 < len(rest) else None
            if a in ("-p", "--package"):
                pkg = val
                if pkg not in self.crates:
                    self.error(where, f"-p {pkg}: not a workspace crate ({', '.join(sorted(self.crates))})",
                               line)
                    return
                i += 2
                continue
            if a.startswith("--package="):
                pkg = a.split("=", 1)[1]
            if a == "--example":
                example = val
                i += 2
                continue
            i += 1
        if example:
            dirs = [self.crates[pkg]] if pkg else list(self.crates.values())
            if not any(os.path.isfile(os.path.join(d, "examples", example + ".rs"))
                       or os.path.isfile(os.path.join(d, "examples", example, "main.rs")) for d in dirs):
                self.error(where, f"no example named {example}" + (f" in {pkg}" if pkg else ""), line)
        if sub == "run" and pkg == "ferroflow" and not example:
            self.ferroflow(where, tail, line, strict=False)

    def python(self, where, args, line):
        if not args or args[0] in ("-c", "-m"):
            return  # `python -m pip ...`: its repository paths were checked already
        script = args[0]
        path = os.path.join(ROOT, script)
        if not os.path.isfile(path):
            self.error(where, f"no such Python script: {script}", line)
            return
        src = open(path, encoding="utf-8").read()
        for f in FLAG.findall(" ".join(args[1:])):
            if f not in src:
                self.error(where, f"{script} does not define {f}", line)

    # ---- documents -----------------------------------------------------------------
    def anchors(self, path):
        if path not in self._anchors:
            out, fence = set(), False
            for line in open(path, encoding="utf-8"):
                if line.startswith("```"):
                    fence = not fence
                m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
                if m and not fence:
                    slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
                    out.add(slug)
            self._anchors[path] = out
        return self._anchors[path]

    def links(self, rel, prose):
        here = os.path.dirname(os.path.join(ROOT, rel))
        for lineno, text in prose:
            for m in re.finditer(r"\]\(([^)\s]+)\)", text):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target) or target.startswith("<"):
                    continue
                self.counts["links"] += 1
                where = f"{rel}:{lineno}"
                file, _, anchor = target.partition("#")
                path = os.path.normpath(os.path.join(here, file)) if file else os.path.join(ROOT, rel)
                if not os.path.exists(path):
                    self.error(where, f"broken link: {target}")
                elif anchor and path.endswith(".md") and anchor not in self.anchors(path):
                    self.error(where, f"no heading for the anchor: {target}")

    def inline(self, rel, prose):
        # Code spans may wrap onto the next line: join the prose, keeping line starts.
        text, starts = "", []
        for lineno, line in prose:
            starts.append((len(text), lineno))
            text += line + "\n"

        def lineno_at(off):
            n = starts[0][1]
            for o, ln in starts:
                if o > off:
                    break
                n = ln
            return n

        for m in re.finditer(r"(?<!`)`([^`]+)`(?!`)", text):
            span = " ".join(m.group(1).split())
            where = f"{rel}:{lineno_at(m.start())}"
            first = span.split(" ", 1)[0]
            if first in ("ferroflow", "cargo") and " " in span:
                second = span.split()[1]
                if first == "cargo" and second not in CARGO_SUBCOMMANDS:
                    continue
                self.command(where, span, strict=False)
            elif re.fullmatch(r"(crates|scripts|deploy|data|python|docs)/[\w./*-]+", span):
                self.repo_path(where, span)

    def document(self, rel):
        lines = open(os.path.join(ROOT, rel), encoding="utf-8").read().split("\n")
        prose, i = [], 0
        while i < len(lines):
            m = re.match(r"^(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
            if not m:
                prose.append((i + 1, lines[i]))
                i += 1
                continue
            fence, lang, start = m.group(1), m.group(2).lower(), i + 1
            block = []
            i += 1
            while i < len(lines) and not lines[i].startswith(fence):
                block.append((i + 1, lines[i]))
                i += 1
            i += 1
            if i > len(lines):
                self.error(f"{rel}:{start}", "unclosed code block")
            self.block(rel, lang, start, block)
        self.links(rel, prose)
        self.inline(rel, prose)

    def block(self, rel, lang, start, block):
        if lang == "python":
            self.counts["python blocks"] += 1
            src = "\n".join(t for _, t in block)
            try:
                ast.parse(src)
            except SyntaxError as e:
                if "..." in src:
                    self.skipped.append(f"{rel}:{start}: python block with `...` placeholders (does not parse)")
                else:
                    self.error(f"{rel}:{start + (e.lineno or 0)}", f"python block does not parse: {e.msg}")
            return
        if lang in COMMAND_LANGS:
            cmds, cur, first = [], "", None
            for n, t in block:
                if first is None:
                    first = n
                cur += t.rstrip()
                if cur.endswith("\\"):
                    cur = cur[:-1] + " "
                    continue
                cmds.append((first, cur))
                cur, first = "", None
            if cur:
                cmds.append((first, cur))
            for n, c in cmds:
                if c.strip() and not c.lstrip().startswith("#"):
                    self.command(f"{rel}:{n}", c, strict=True)
        elif lang in USAGE_LANGS:
            cmds = []
            for n, t in block:
                if t.startswith(("ferroflow ", "cargo ")):
                    cmds.append([n, t])
                elif cmds and re.match(r"^\s+[\[-]", t) and cmds[-1][0] is not None:
                    cmds[-1][1] += " " + t.strip()
                else:
                    cmds.append([None, ""])  # ends a usage line
            for n, c in cmds:
                if n is not None:
                    self.command(f"{rel}:{n}", c, strict=False)


def main():
    binary = os.environ.get("FERROFLOW_BIN") or os.path.join(ROOT, "target", "release", "ferroflow")
    if not os.access(binary, os.X_OK):
        print(f"check_docs: ferroflow binary not found at {binary} (build it, or set FERROFLOW_BIN)",
              file=sys.stderr)
        return 2
    docs = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    c = Checker(binary)
    for rel in docs:
        c.document(rel)
    for s in c.skipped:
        print(f"skipped: {s}")
    summary = ", ".join(f"{n} {k}" for k, n in c.counts.items())
    if c.errors:
        print(f"check_docs: {len(c.errors)} stale item(s) in {', '.join(docs)}:", file=sys.stderr)
        for e in c.errors:
            print(f"  {e}", file=sys.stderr)
        return 1
    print(f"check_docs: ok ({summary} checked in {len(docs)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
