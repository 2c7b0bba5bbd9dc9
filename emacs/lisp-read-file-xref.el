;;; lisp-read-file-xref.el --- Definitions and uses for xref, without a running Lisp  -*- lexical-binding: t; -*-

;; Copyright (C) 2025 The lisp-read-file authors

;; Author: The lisp-read-file authors
;; Version: 0.1.0
;; Keywords: languages, lisp, tools
;; URL: https://github.com/lisp-read-file/lisp-read-file
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The xref backend of lisp-read-file, part of the lisp-read-file
;; package (see lisp-read-file.el, whose `lisp-read-file-mode' installs
;; it): `lisp-read-file-xref-backend' answers M-.
;; (`xref-find-definitions'), M-? (`xref-find-references') and C-M-.
;; (`xref-find-apropos') from the files of the project root, read by
;; the lisp-find tool of the companion process, so that no Lisp has to
;; run or to have loaded the code.  It is a fallback behind SLIME's or
;; SLY's backend unless `lisp-read-file-xref-first' is set.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'thingatpt)
(require 'xref)
(require 'lisp-read-file)

(declare-function lisp-read-file--outline-symbol-at-point "lisp-read-file-outline" ())

;;;; Xref

(defcustom lisp-read-file-xref-cache-seconds 10
  "Seconds for which the names of a project's definitions are kept.
They are the completions at the prompt of `xref-find-definitions'."
  :type 'number
  :group 'lisp-read-file)

(cl-defstruct (lisp-read-file--xref-backend
               (:constructor lisp-read-file--xref-backend-create)
               (:copier nil))
  "The xref backend of lisp-read-file, for one project root."
  root)

(cl-defstruct (lisp-read-file--xref-location
               (:constructor lisp-read-file--xref-location-create)
               (:copier nil))
  "A place in a file: FILE (absolute), LINE (1-based), COLUMN (0-based).
GROUP is the name of its group in the xref buffer."
  file line column group)

(cl-defmethod xref-location-group ((location lisp-read-file--xref-location))
  "Return the group of LOCATION."
  (lisp-read-file--xref-location-group location))

(cl-defmethod xref-location-line ((location lisp-read-file--xref-location))
  "Return the line of LOCATION."
  (lisp-read-file--xref-location-line location))

(cl-defmethod xref-location-marker ((location lisp-read-file--xref-location))
  "Return a marker at LOCATION."
  (xref-location-marker
   (xref-make-file-location (lisp-read-file--xref-location-file location)
                            (lisp-read-file--xref-location-line location)
                            (lisp-read-file--xref-location-column location))))

(defvar lisp-read-file--asking-backends nil
  "Non-nil while `lisp-read-file-xref-backend' asks the other backends.")

(defun lisp-read-file--other-xref-backend ()
  "Return a backend that another buffer-local xref function gives, or nil.
Only the functions in the buffer-local `xref-backend-functions' are
asked (SLIME's, SLY's...), not the global ones such as etags'."
  (and (local-variable-p 'xref-backend-functions)
       (let ((lisp-read-file--asking-backends t))
         (cl-some (lambda (function)
                    (and (functionp function)
                         (not (eq function #'lisp-read-file-xref-backend))
                         (ignore-errors (funcall function))))
                  xref-backend-functions))))

(defun lisp-read-file-xref-backend ()
  "Return the lisp-read-file xref backend for this buffer, or nil.
`lisp-read-file-mode' and the outline buffers add this function to
the buffer-local value of `xref-backend-functions'.  Unless
`lisp-read-file-xref-first' is non-nil it is a fallback: it returns
nil when another buffer-local backend function, such as SLIME's or
SLY's when they are connected to a Lisp, offers a backend, so that
that backend is used."
  (when (and (or lisp-read-file-mode
                 (derived-mode-p 'lisp-read-file-outline-mode))
             (not lisp-read-file--asking-backends)
             (or lisp-read-file-xref-first
                 (not (lisp-read-file--other-xref-backend))))
    (lisp-read-file--xref-backend-create
     :root (ignore-errors (lisp-read-file--buffer-root)))))

(defun lisp-read-file--backend-root (backend)
  "Return the root of BACKEND, or signal a `user-error'."
  (or (lisp-read-file--xref-backend-root backend)
      (lisp-read-file--buffer-root)))

(defun lisp-read-file--identifier-at-point ()
  "Return the Lisp symbol at point as written, or nil.
Quote and function prefixes are left out: #\\='foo gives \"foo\"."
  (let ((symbol (with-syntax-table lisp-mode-syntax-table
                  (if (derived-mode-p 'lisp-read-file-outline-mode)
                      (lisp-read-file--outline-symbol-at-point)
                    (thing-at-point 'symbol t)))))
    (when symbol
      (setq symbol (replace-regexp-in-string "\\`\\(?:#'\\|['`,@#]\\)+" "" symbol)))
    (when (and symbol (not (string= symbol ""))
               (not (string-match-p "\\`[-+]?[0-9.]+\\'" symbol)))
      symbol)))

(cl-defmethod xref-backend-identifier-at-point
  ((_backend lisp-read-file--xref-backend))
  "Return the symbol at point."
  (lisp-read-file--identifier-at-point))

(defun lisp-read-file--expand (file root)
  "Return FILE, relative to ROOT as the tool gives it, as an absolute name."
  (expand-file-name file root))

(defun lisp-read-file--definition-summary (definition)
  "Return the xref summary of DEFINITION, a lisp-find item.
A derived definition (an accessor of a slot, a structure's
constructor) names its kind and the form that makes it; a definition
a macro of the project makes names the macro and its call."
  (let ((signature (alist-get 'signature definition))
        (kind (alist-get 'kind definition))
        (name (alist-get 'name definition))
        (via (alist-get 'via definition)))
    (cond ((and (alist-get 'form definition) (stringp via))
           (format "%s %s, via %s: %s" kind name via (or signature "")))
          ((alist-get 'form definition)
           (format "%s %s, made by %s" kind name (or signature "")))
          (signature)
          (t (format "(%s %s ...)" kind name)))))

(defun lisp-read-file--package-group (item group)
  "Return GROUP, an xref group name, with the package of ITEM in front.
ITEM is a lisp-find definition or reference: \"[package shapes] GROUP\",
\"[package ppcre?] GROUP\" when the package is unresolved (defined
outside the project, or one it uses is: the symbol may be of that
package), GROUP alone when ITEM has no package."
  (let ((package (alist-get 'package item)))
    (if (stringp package)
        (format "[package %s%s] %s" package
                (if (alist-get 'package_unresolved item) "?" "")
                group)
      group)))

(defun lisp-read-file--definition-xrefs (root definitions)
  "Return the xrefs of DEFINITIONS, lisp-find items relative to ROOT.
They are grouped by package and file."
  (mapcar (lambda (definition)
            (let ((file (lisp-read-file--expand (alist-get 'file definition) root)))
              (xref-make (lisp-read-file--definition-summary definition)
                         (lisp-read-file--xref-location-create
                          :file file :line (alist-get 'line definition)
                          :column (or (alist-get 'column definition) 0)
                          :group (lisp-read-file--package-group definition file)))))
          definitions))

(cl-defmethod xref-backend-definitions
  ((backend lisp-read-file--xref-backend) identifier)
  "Return the definitions named IDENTIFIER in the project of BACKEND."
  (let* ((root (lisp-read-file--backend-root backend))
         (definitions (lisp-read-file--find-items
                       root `((name . ,identifier)) 'definitions)))
    (lisp-read-file--warn-if-modified-under root)
    (lisp-read-file--definition-xrefs root definitions)))

(defun lisp-read-file--token-length (text column)
  "Return the length of the symbol token at COLUMN of TEXT, at least 1."
  (if (and (integerp column) (< column (length text))
           (string-match "[^][ \t\n()'\"`,;]+" text column)
           (= (match-beginning 0) column))
      (- (match-end 0) column)
    1))

(cl-defmethod xref-backend-references
  ((backend lisp-read-file--xref-backend) identifier)
  "Return the places of the symbol IDENTIFIER in the project of BACKEND.
They are grouped by the top-level form around them, as the tool
groups them: \"[package P] FILE: LINE (signature)\"."
  (lisp-read-file--with-fewer-gcs
    (lisp-read-file--reference-xrefs
     (lisp-read-file--backend-root backend) identifier)))

(defun lisp-read-file--reference-xrefs (root identifier)
  "Return an xref for each use of the symbol IDENTIFIER in the project ROOT."
  (let* ((references (lisp-read-file--find-items
                      root `((symbol . ,identifier)) 'references))
         (xrefs nil))
    (dolist (reference references)
      (let* ((file (alist-get 'file reference))
             (group (lisp-read-file--package-group
                     reference
                     (format "%s: %s %s" file (alist-get 'line reference)
                             (or (alist-get 'signature reference)
                                 (alist-get 'name reference) "")))))
        (dolist (use (alist-get 'uses reference))
          (push (lisp-read-file--match-xref
                 (or (alist-get 'text use) "") (alist-get 'line use)
                 (or (alist-get 'column use) 0)
                 (lisp-read-file--expand file root) group)
                xrefs))))
    (lisp-read-file--warn-if-modified-under root)
    (nreverse xrefs)))

(cl-defmethod xref-backend-apropos
  ((backend lisp-read-file--xref-backend) pattern)
  "Return the definitions whose name matches PATTERN in BACKEND's project.
PATTERN is a regular expression or text (Rust syntax, matched without
case); several words separated by spaces must all occur in the name."
  (let* ((root (lisp-read-file--backend-root backend))
         (words (split-string pattern "[ \t]+" t))
         (definitions
          (if (cdr words)
              (cl-remove-if-not
               (lambda (definition)
                 (let ((name (downcase (or (alist-get 'name definition) ""))))
                   (cl-every (lambda (word) (string-match-p (regexp-quote (downcase word))
                                                            name))
                             words)))
               (lisp-read-file--find-items
                root `((name_pattern . ,(lisp-read-file--regexp-quote
                                         (car (sort (copy-sequence words)
                                                    (lambda (a b)
                                                      (> (length a) (length b))))))))
                'definitions))
            (lisp-read-file--find-items
             root `((name_pattern . ,(string-trim pattern))) 'definitions))))
    (lisp-read-file--warn-if-modified-under root)
    (lisp-read-file--definition-xrefs root definitions)))

(defvar lisp-read-file--names-cache (make-hash-table :test #'equal)
  "Names of definitions by (ROOT . PREFIX): (TIME COMPLETE NAMES).
NAMES are those starting with PREFIX (in lower case); COMPLETE is nil
when lisp-find had more than it read.")

(defun lisp-read-file--symbol-name (definition)
  "Return the name of the symbol of DEFINITION, a lisp-find item.
A method named \"area :around (square)\" gives \"area\"."
  (let ((name (alist-get 'name definition)))
    (if (and (stringp name) (string-match "\\`[^ (]+" name))
        (match-string 0 name)
      name)))

(defun lisp-read-file--cached-names (root prefix)
  "Return (t . NAMES), the names kept for ROOT that start with PREFIX, or nil.
Names kept for PREFIX itself serve, and so do those of a shorter
prefix when they were complete: they are filtered."
  (cl-loop for end from (length prefix) downto 0
           for kept = (gethash (cons root (substring prefix 0 end))
                               lisp-read-file--names-cache)
           when (and kept
                     (< (- (float-time) (car kept)) lisp-read-file-xref-cache-seconds)
                     (or (= end (length prefix)) (cadr kept)))
           return (cons t (cl-remove-if-not
                           (lambda (name) (string-prefix-p prefix name t))
                           (nth 2 kept)))))

(defun lisp-read-file--definition-names (root prefix)
  "Return the names of the definitions under ROOT that start with PREFIX.
The case is ignored.  They are asked from lisp-find by PREFIX (up
to `lisp-read-file-find-max-pages' pages, one for a prefix of less
than two characters, which names too many to read quickly) and kept
`lisp-read-file-xref-cache-seconds', so that typing more filters
them instead of asking again."
  (let* ((prefix (downcase prefix))
         (cached (lisp-read-file--cached-names root prefix)))
    (if cached
        (cdr cached)
      (let* ((found (lisp-read-file--with-fewer-gcs
                      (lisp-read-file--find-pages
                       root `((name_pattern . ,(concat "^" (lisp-read-file--regexp-quote
                                                            prefix))))
                       'definitions (and (< (length prefix) 2) 1))))
             (names (delq nil (delete-dups (mapcar #'lisp-read-file--symbol-name
                                                   (car found))))))
        (puthash (cons root prefix) (list (float-time) (cdr found) names)
                 lisp-read-file--names-cache)
        names))))

(cl-defmethod xref-backend-identifier-completion-table
  ((backend lisp-read-file--xref-backend))
  "Return the names of the definitions in the project of BACKEND.
They are asked by what is typed: the names that start with it."
  (let ((root (lisp-read-file--backend-root backend)))
    (lambda (string predicate action)
      (let ((completion-ignore-case t))
        (complete-with-action action (lisp-read-file--definition-names root string)
                              string predicate)))))

;;;; Callers and callees

(defun lisp-read-file--read-symbol (prompt)
  "Read a symbol with PROMPT, the symbol at point as the default."
  (let* ((default (lisp-read-file--identifier-at-point))
         (answer (read-string (if default (format "%s(default %s) " prompt default) prompt)
                              nil nil default)))
    (if (string-empty-p (string-trim answer))
        (user-error "No symbol given")
      (string-trim answer))))

(defun lisp-read-file--match-xref (text line column file group)
  "Return an xref of the token at COLUMN of TEXT, at LINE of FILE in GROUP."
  (let* ((length (lisp-read-file--token-length text column))
         (summary (copy-sequence text)))
    (when (<= (+ column length) (length summary))
      (add-face-text-property column (+ column length) 'xref-match nil summary))
    (xref-make-match summary
                     (lisp-read-file--xref-location-create
                      :file file :line line :column column :group group)
                     length)))

(defun lisp-read-file--who-calls-xrefs (root symbol)
  "Return the xrefs of the callers of SYMBOL in the project ROOT.
One per call, grouped by the definition that makes it:
\"FILE: LINE (signature)\"."
  (let ((xrefs nil))
    (dolist (caller (lisp-read-file--find-items root `((callers . ,symbol)) 'callers))
      (let* ((file (alist-get 'file caller))
             (group (format "%s: %s %s" file (alist-get 'line caller)
                            (or (alist-get 'signature caller) ""))))
        (dolist (call (alist-get 'calls caller))
          (push (lisp-read-file--match-xref
                 (or (alist-get 'text call) "") (alist-get 'line call)
                 (or (alist-get 'column call) 0)
                 (lisp-read-file--expand file root) group)
                xrefs))))
    (nreverse xrefs)))

(defun lisp-read-file--callee-summary (name definition)
  "Return the xref summary of DEFINITION, a definition of the callee NAME.
\"KIND NAME in FILE\": the file is said because the group is the
caller's, and its line number alone would read as a line of the
caller's file.  NAME comes first when the definition's name differs,
as a call written pkg:foo does."
  (let ((defined (alist-get 'name definition)))
    (format "%s%s %s in %s"
            (if (string= (downcase name) (downcase (or defined ""))) ""
              (concat name ": "))
            (alist-get 'kind definition) defined (alist-get 'file definition))))

(defun lisp-read-file--callees-xrefs (root name)
  "Return (XREFS OUTSIDE): what the definitions NAME call in project ROOT.
XREFS are the definitions of the project that they call, grouped by
the calling definition; OUTSIDE the names they call that the project
does not define."
  (let ((xrefs nil)
        (outside nil))
    (dolist (entry (lisp-read-file--find-items root `((callees . ,name)) 'callees))
      (let ((group (format "%s: %s %s calls" (alist-get 'file entry)
                           (alist-get 'line entry)
                           (or (alist-get 'signature entry) ""))))
        (dolist (callee (alist-get 'callees entry))
          (dolist (definition (alist-get 'definitions callee))
            (push (xref-make
                   (lisp-read-file--callee-summary (alist-get 'name callee) definition)
                   (lisp-read-file--xref-location-create
                    :file (lisp-read-file--expand (alist-get 'file definition) root)
                    :line (alist-get 'line definition) :column 0 :group group))
                  xrefs)))
        (dolist (other (alist-get 'outside entry))
          (cl-pushnew other outside :test #'equal))))
    (list (nreverse xrefs) (nreverse outside))))

(defun lisp-read-file--show-xrefs (xrefs empty)
  "Show XREFS in an xref buffer, or say EMPTY when there are none."
  (if xrefs
      ;; `xref-show-xrefs' is Emacs 29's; the function it calls is older.
      (funcall xref-show-xrefs-function (lambda () xrefs)
               `((window . ,(selected-window))))
    (message "%s" empty)))

;;;###autoload
(defun lisp-read-file-who-calls (symbol)
  "Show the callers of SYMBOL: the project's definitions that call it.
An xref buffer lists each call, grouped by the calling definition
\(each method of its own).  A call is the symbol in operator
position, #\\='symbol, (function symbol), or the quoted symbol given
to funcall or apply; a variable of that name, quoted data and a
local flet or labels function of that name are not.  Interactively,
SYMBOL is read with the symbol at point as the default."
  (interactive (list (lisp-read-file--read-symbol "Who calls: ")))
  (let* ((root (lisp-read-file--buffer-root))
         (xrefs (lisp-read-file--with-fewer-gcs
                  (lisp-read-file--who-calls-xrefs root symbol))))
    (lisp-read-file--warn-if-modified-under root)
    (lisp-read-file--show-xrefs xrefs (format "No callers of %s in %s" symbol root))))

;;;###autoload
(defun lisp-read-file-callees (name)
  "Show what the definitions named NAME call.
An xref buffer lists the definitions of the project that their code
calls, grouped by the calling definition; the names they call that
the project does not define (Common Lisp's own left out) are said in
the echo area.  Interactively, NAME is read with the symbol at point
as the default."
  (interactive (list (lisp-read-file--read-symbol "Callees of: ")))
  (let* ((root (lisp-read-file--buffer-root))
         (found (lisp-read-file--callees-xrefs root name))
         (outside (cadr found)))
    (lisp-read-file--warn-if-modified-under root)
    (lisp-read-file--show-xrefs
     (car found) (format "%s calls no definition of %s" name root))
    (when outside
      (message "%s also calls, outside the project: %s"
               name (mapconcat #'identity outside ", ")))))

(provide 'lisp-read-file-xref)
;;; lisp-read-file-xref.el ends here
