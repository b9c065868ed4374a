"""Every relative link in the repository's Markdown files points at a file that is in the
repository, and a link to a section (#anchor) at a heading of that file (GitHub's anchor
rule: lower case, punctuation dropped, spaces as "-"). Code spans and fenced blocks are
not links. Usage: doc_links.py SOURCE_DIR; prints each broken link, exits 1 if any."""
import os
import re
import subprocess
import sys


def markdown_files():
    """The tracked files when this is a git checkout, else every .md under the tree."""
    try:
        out = subprocess.run(["git", "ls-files", "*.md"], capture_output=True, text=True, check=True)
        return out.stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return [os.path.relpath(os.path.join(d, n)) for d, _, names in os.walk(".") for n in names
                if n.endswith(".md")]


def anchors(path):
    found = set()
    fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            if not fence and line.startswith("#"):
                title = line.lstrip("#").strip().lower()
                found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def main():
    os.chdir(sys.argv[1])
    bad = []
    for f in markdown_files():
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            link = m.group(1)
            if re.match(r"^(https?:|mailto:)", link):
                continue
            path, _, frag = link.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(target):
                bad.append("%s: link to %s: no such file" % (f, link))
            elif frag and target.endswith(".md") and frag not in anchors(target):
                bad.append("%s: link to %s: no such section" % (f, link))
    print("\n".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
