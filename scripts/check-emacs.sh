#!/usr/bin/env bash
# Checks the Emacs package (emacs/lisp-read-file*.el) as a package archive would, without
# the lisp-read-file program: every file byte-compiles with `byte-compile-error-on-warn'
# (in a scratch directory, so no .elc is left in the tree), and package-lint finds nothing
# to report on the three files checked as one package whose main file is lisp-read-file.el.
# Exits non-zero on any warning or error. The ERT suite (emacs/test/run-tests.sh, run by
# tests/emacs/emacs.rs) needs the program and is separate.
# Needs emacs and package-lint (Debian: apt-get install emacs-nox elpa-package-lint), or
# PACKAGE_LINT_DIR naming the directory holding package-lint.el.
# Usage: bash scripts/check-emacs.sh
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
EMACS="${EMACS:-emacs}"

if ! command -v "$EMACS" >/dev/null 2>&1; then
  echo "check-emacs.sh: '$EMACS' not found; install emacs-nox (bash .ci/run does)" >&2
  exit 2
fi
lint_dir="${PACKAGE_LINT_DIR:-}"
if [ -z "$lint_dir" ]; then
  for dir in /usr/share/emacs/site-lisp/elpa/package-lint-*; do
    [ -f "$dir/package-lint.el" ] && lint_dir="$dir"
  done
fi
if [ -z "$lint_dir" ] || [ ! -f "$lint_dir/package-lint.el" ]; then
  echo "check-emacs.sh: package-lint not found; apt-get install elpa-package-lint, or set PACKAGE_LINT_DIR" >&2
  exit 2
fi

build="$(mktemp -d "${TMPDIR:-/tmp}/lisp-read-file-check.XXXXXX")"
trap 'rm -rf "$build"' EXIT
cp "$repo"/emacs/lisp-read-file*.el "$build/"
files=(lisp-read-file.el lisp-read-file-outline.el lisp-read-file-xref.el)
for file in "${files[@]}"; do
  [ -f "$build/$file" ] || { echo "check-emacs.sh: emacs/$file is missing" >&2; exit 1; }
done

echo "==> byte-compile (warnings are errors) with $("$EMACS" --version | head -n 1)"
for file in "${files[@]}"; do
  echo "    $file"
  "$EMACS" --batch -Q -L "$build" \
    --eval '(setq byte-compile-error-on-warn t)' \
    --eval "(unless (byte-compile-file \"$build/$file\") (kill-emacs 1))"
done

echo "==> package-lint $(basename "$lint_dir") (main file lisp-read-file.el)"
# package-lint-batch-and-exit exits 1 when it reports anything, warnings included.
(cd "$build" && "$EMACS" --batch -Q -L "$lint_dir" \
  --eval "(require 'package-lint)" \
  --eval '(setq package-lint-main-file "lisp-read-file.el")' \
  -f package-lint-batch-and-exit "${files[@]}")
echo "==> the Emacs package is clean"
