"""Compares `find --json` between two builds of lisp-read-file, byte for byte, over names
defined in each Debian Common Lisp source directory and in SBCL's sources (sampled with a
fixed seed): --name, --name-pattern '^NAME$', --symbol, --callers and --callees.

Usage: python3 scripts/compare-find.py OLD_BINARY NEW_BINARY [NAMES_PER_DIRECTORY]
"""
import os, random, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
OLD, NEW = sys.argv[1], sys.argv[2]
PER_DIR = int(sys.argv[3]) if len(sys.argv) > 3 else 3
random.seed(20261127)
roots = sorted(os.path.join('/usr/share/common-lisp/source', d) for d in os.listdir('/usr/share/common-lisp/source'))
roots = [r for r in roots if os.path.isdir(r)] + ['/usr/share/sbcl-source']
DEF = re.compile(rb'^\s*\((?:[a-z-]*:)?(def[a-z0-9-]*|%def[a-z-]*)\s+\(?([a-z0-9*%+<>=/!?-]{2,40})[\s)]', re.I | re.M)
def names_of(root, n):
    found = set()
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(('.lisp', '.lsp', '.cl')):
                try:
                    b = open(os.path.join(d, f), 'rb').read()
                except OSError:
                    continue
                for m in DEF.finditer(b):
                    found.add(m.group(2).decode().lower())
    found = sorted(found)
    return random.sample(found, min(n, len(found)))
jobs = []
for root in roots:
    n = PER_DIR * 3 if root.endswith('sbcl-source') else PER_DIR
    for name in names_of(root, n):
        for mode in (['--name', name], ['--name-pattern', '^' + re.escape(name) + '$'], ['--symbol', name], ['--callers', name], ['--callees', name]):
            jobs.append((root, mode))
def run(job):
    root, mode = job
    outs = []
    for b in (OLD, NEW):
        # `--flag=VALUE`: a name such as `-e-` is not an option.
        p = subprocess.run([b, 'find', '--json', f'{mode[0]}={mode[1]}', '.'], cwd=root, capture_output=True, timeout=300)
        outs.append((p.returncode, p.stdout, p.stderr))
    return job, outs[0] == outs[1], outs[0][0]
same = diff = 0
with ThreadPoolExecutor(2) as ex:
    for job, ok, rc in ex.map(run, jobs):
        if ok:
            same += 1
        else:
            diff += 1
            print('DIFF', job, flush=True)
print(f'{same} identical, {diff} different, of {len(jobs)} queries over {len(roots)} trees')
