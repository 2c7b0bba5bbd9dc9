;;; lsp_mode_definition.el --- Emacs lsp-mode jumps to a definition in another file  -*- lexical-binding: t -*-
;; emacs -Q --batch -l lsp_mode_definition.el, with LRF_BIN and LRF_ROOT set: registers
;; `lisp-read-file lsp' with lsp-mode as docs/lsp.md says, adds fixtures/lsp/project as a
;; workspace folder, opens src/render.lisp and runs `lsp-find-definition' on `square'.
;; Prints "JUMPED FILE:LINE"; exits 1 on failure. Debian's elpa-lsp-mode.
(let ((default-directory "/usr/share/emacs/site-lisp/elpa/"))
  (when (file-directory-p default-directory)
    (normal-top-level-add-subdirs-to-load-path)))
(require 'lsp-mode)
(let* ((bin (getenv "LRF_BIN"))
       (root (file-name-as-directory (getenv "LRF_ROOT")))
       ;; A session of its own, so no folder of the user's is read or written.
       (lsp-session-file (expand-file-name "session" (make-temp-file "lsp-mode" t)))
       (lsp-auto-guess-root nil)
       (lsp-enable-snippet nil)
       (lsp-restart 'ignore)
       ;; Batch Emacs has no mode line or header line to show them in.
       (lsp-modeline-workspace-status-enable nil)
       (lsp-modeline-code-actions-enable nil)
       (lsp-modeline-diagnostics-enable nil)
       (lsp-headerline-breadcrumb-enable nil))
  ;; The configuration of docs/lsp.md, with the binary under test.
  (add-to-list 'lsp-language-id-configuration '(lisp-mode . "commonlisp"))
  (lsp-register-client
   (make-lsp-client :new-connection (lsp-stdio-connection (list bin "lsp"))
                    :activation-fn (lsp-activate-on "commonlisp")
                    :server-id 'lisp-read-file))
  (condition-case err
      (progn
        (lsp-workspace-folders-add root)
        (find-file (expand-file-name "src/render.lisp" root))
        (lisp-mode)
        (lsp)
        (with-timeout (20 (error "lsp-mode did not connect"))
          (while (not (and (lsp-workspaces)
                           (eq (lsp--workspace-status (car (lsp-workspaces)))
                               'initialized)))
            (accept-process-output nil 0.05)))
        (goto-char (point-min))
        (search-forward "(square")
        (backward-char 2)
        (lsp-find-definition)
        (princ (format "JUMPED %s:%d\n" (buffer-file-name) (line-number-at-pos)))
        (kill-emacs 0))
    (error (princ (format "FAILED %S\n" err)) (kill-emacs 1))))
