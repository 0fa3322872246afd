#!/usr/bin/env python3
"""Checks the relative links of the repository's Markdown files: `](path)` must name an existing
file or directory, and `](path#anchor)` / `](#anchor)` a heading of that file (GitHub's anchor
rules). Links with a scheme (https:, mailto:) are not checked. Exits 1 listing every broken link.
Usage: scripts/check-doc-links.py [FILE.md ...]   (default: every tracked *.md)"""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(root)
files = sys.argv[1:] or [f for f in subprocess.run(["git", "ls-files", "*.md"], capture_output=True,
                                                   text=True, check=True).stdout.split()
                         if "node_modules/" not in f]

def without_code(text):
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # fenced blocks
    return re.sub(r"`[^`\n]*`", "", text)                      # inline code

def anchors(path):
    """GitHub's anchors of the headings of `path` (code spans in a heading count as text)."""
    seen, out = {}, set()
    text = re.sub(r"^```.*?^```", "", open(path, encoding="utf-8").read(), flags=re.S | re.M)
    for line in text.splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out

broken = checked = 0
for f in files:
    text = without_code(open(f, encoding="utf-8").read())
    for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue
        checked += 1
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(dest):
            print(f"{f}: {target}: no such file {dest}")
            broken += 1
        elif anchor and (not dest.endswith(".md") or anchor not in anchors(dest)):
            print(f"{f}: {target}: no heading #{anchor} in {dest}")
            broken += 1
print(f"{checked} relative links in {len(files)} files checked, {broken} broken")
sys.exit(1 if broken else 0)
