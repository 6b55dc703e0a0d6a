#!/usr/bin/env python3
"""Extracts prose paragraphs of the React documentation (react.dev and its
translations, CC BY 4.0) as benign training passages for the local
classifier, one passage per line, at most N per language, chosen by a hash
of the text (deterministic).

  scripts/extract-react-docs.py OUTDIR[:PAGEDIR] N LANG=GITDIR@COMMIT...

With PAGEDIR, every document's remaining paragraphs (those not picked, at
least three) are written there as one text file: real benign pages never
trained on, for choosing the operating point.

GITDIR is a git directory of reactjs/<lang>.react.dev; the Markdown under
src/content at COMMIT is read with git show.
"""
import hashlib, re, subprocess, sys

def prose(md):
    out, fence, front = [], False, False
    lines = md.split("\n")
    if lines and lines[0].strip() == "---":
        front = True
    para = []
    def flush():
        if para:
            out.append(" ".join(para))
            para.clear()
    for i, l in enumerate(lines):
        s = l.strip()
        if front:
            if i > 0 and s == "---":
                front = False
            continue
        if s.startswith("```"):
            fence = not fence
            flush()
            continue
        if fence:
            continue
        if not s or s.startswith(("#", "<", "|", "import ", "export ", "{", "}", ">")):
            flush()
            continue
        s = re.sub(r"^([*+-]|\d+\.)\s+", "", s)
        para.append(s)
    flush()
    res = []
    for p in out:
        p = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", p)
        p = re.sub(r"<[^>]*>", "", p)
        p = re.sub(r"\{/\*.*?\*/\}", "", p)
        p = p.replace("**", "").replace("`", "")
        p = re.sub(r"\s+", " ", p).strip()
        if 60 <= len(p) <= 600 and not re.search(r"[{}=;]", p):
            res.append(p)
    return res

def main():
    outdir, n = sys.argv[1], int(sys.argv[2])
    pagedir = None
    if ":" in outdir:
        # OUTDIR:PAGEDIR also writes the calibration pages.
        outdir, pagedir = outdir.split(":", 1)
    for arg in sys.argv[3:]:
        lang, rest = arg.split("=", 1)
        gitdir, commit = rest.rsplit("@", 1)
        names = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "-r", "--name-only", commit, "src/content"],
                               capture_output=True, text=True, check=True).stdout.split()
        seen, pages = set(), {}
        for name in sorted(names):
            if not name.endswith(".md"):
                continue
            md = subprocess.run(["git", "--git-dir", gitdir, "show", commit + ":" + name],
                                capture_output=True, text=True, check=True).stdout
            pages[name] = prose(md)
            seen.update(pages[name])
        picked = sorted(seen, key=lambda p: hashlib.sha256(p.encode()).hexdigest())[:n]
        if pagedir:
            # Pages for calibration: each document's paragraphs that were not
            # picked for training, as one text.
            keep = set(picked)
            for name, ps in pages.items():
                rest = [p for p in ps if p not in keep]
                if len(rest) >= 3:
                    fn = lang + "-" + name.replace("/", "_").removesuffix(".md") + ".txt"
                    with open(f"{pagedir}/{fn}", "w") as f:
                        f.write("\n\n".join(rest) + "\n")
        with open(f"{outdir}/benign-react-{lang}.txt", "w") as f:
            f.write(f"# React documentation ({lang}), reactjs/{'' if lang == 'en' else lang + '.'}react.dev@{commit}, CC BY 4.0; {len(picked)} of {len(seen)} prose paragraphs, see README.md\n")
            for p in sorted(picked):
                f.write(p + "\n")
        print(lang, len(picked), "of", len(seen))

main()
