;;; eglot_definition.el --- Emacs eglot jumps to a definition in another file  -*- lexical-binding: t -*-
;; emacs -Q --batch -l eglot_definition.el, with LRF_BIN and LRF_ROOT set: starts
;; `lisp-read-file lsp' through eglot on fixtures/lsp/project, opens src/render.lisp, and
;; runs `xref-find-definitions' on `square'. Prints "JUMPED FILE:LINE"; exits 1 on failure.
;; Debian's elpa-* packages (eglot and the newer project and xref it wants).
(let ((default-directory "/usr/share/emacs/site-lisp/elpa/"))
  (when (file-directory-p default-directory)
    (normal-top-level-add-subdirs-to-load-path)))
(require 'eglot)
(let* ((bin (getenv "LRF_BIN"))
       (root (file-name-as-directory (getenv "LRF_ROOT")))
       (eglot-server-programs `((lisp-mode . (,bin "lsp" "--root" ,root))))
       (project-find-functions (list (lambda (_dir) (cons 'transient root)))))
  (condition-case err
      (progn
        (find-file (expand-file-name "src/render.lisp" root))
        (lisp-mode)
        (apply #'eglot (eglot--guess-contact))
        (with-timeout (20 (error "eglot did not connect"))
          (while (not (eglot-current-server)) (accept-process-output nil 0.05)))
        (goto-char (point-min))
        (search-forward "(square")
        (backward-char 2)
        (xref-find-definitions (xref-backend-identifier-at-point (xref-find-backend)))
        (princ (format "JUMPED %s:%d\n" (buffer-file-name) (line-number-at-pos)))
        (ignore-errors (eglot-shutdown (eglot-current-server)))
        (kill-emacs 0))
    (error (princ (format "FAILED %S\n" err)) (kill-emacs 1))))
