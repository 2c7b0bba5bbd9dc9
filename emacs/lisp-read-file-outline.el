;;; lisp-read-file-outline.el --- Outline buffers, project maps and imenu for lisp-read-file  -*- lexical-binding: t; -*-

;; Copyright (C) 2025 The lisp-read-file authors

;; Author: The lisp-read-file authors
;; Version: 0.1.0
;; Keywords: languages, lisp, tools
;; URL: https://github.com/lisp-read-file/lisp-read-file
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The buffers of lisp-read-file that show views of files, part of
;; the lisp-read-file package (see lisp-read-file.el, which autoloads
;; the commands of this file):
;;
;;   `lisp-read-file-outline'            collapsed view of this file
;;   `lisp-read-file-expand'             expand definitions by name
;;   `lisp-read-file-find-file-outline'  collapsed view of another file
;;   `lisp-read-file-project-outline'    project map of a directory or .asd
;;
;; Each numbered line of an outline buffer
;; (`lisp-read-file-outline-mode') is a button that visits that line
;; of the file.  `lisp-read-file-imenu-create-index' builds the `imenu'
;; index of a Lisp buffer from the outline of its file, grouped as
;; `lisp-read-file-imenu-groups' says.

;;; Code:

(require 'button)
(require 'cl-lib)
(require 'imenu)
(require 'lisp-mode)
(require 'subr-x)
(require 'thingatpt)
(require 'lisp-read-file)

;;;; Customization

(defcustom lisp-read-file-fontify t
  "Non-nil means highlight Lisp code in outline buffers like `lisp-mode'."
  :type 'boolean
  :group 'lisp-read-file)

(defcustom lisp-read-file-imenu-groups
  '(("Packages" "defpackage" "define-package")
    ("Systems" "defsystem")
    ("Variables" "defvar" "defparameter" "defconstant" "defglobal"
     "define-symbol-macro")
    ("Types" "defclass" "defstruct" "deftype" "define-condition")
    ("Functions" "defun" "defgeneric")
    ("Methods" "defmethod")
    ("Macros" "defmacro" "define-compiler-macro" "define-modify-macro"
     "define-setf-expander" "defsetf")
    ("Other" t))
  "How `lisp-read-file-imenu-create-index' groups definitions.
Each element is (GROUP OPERATOR...): definitions whose operator is
one of the OPERATORs (compared without package prefix and case) go
into the submenu GROUP, in file order.  An OPERATOR t stands for
every other operator whose name starts with \"def\".  Forms whose
operator matches no group are left out.  Methods are named as
NAME QUALIFIERS (SPECIALIZERS), e.g. \"area :around (shape)\".

The value nil means a flat index of every form whose operator
starts with \"def\", without submenus."
  :type '(choice (const :tag "Flat index" nil)
                 (repeat (cons (string :tag "Group")
                               (repeat (choice (string :tag "Operator")
                                               (const :tag "Other def..." t))))))
  :group 'lisp-read-file)

(defface lisp-read-file-line-number
  '((t :inherit font-lock-constant-face))
  "Face for the line numbers of outline buffers."
  :group 'lisp-read-file)

(defface lisp-read-file-file-header
  '((t :inherit font-lock-function-name-face :weight bold))
  "Face for the file header lines, \"==> FILE <==\", of project outlines."
  :group 'lisp-read-file)

(defface lisp-read-file-note
  '((t :inherit font-lock-comment-face))
  "Face for notes and footers, the lines in brackets, of outline buffers."
  :group 'lisp-read-file)

;;;; Outline buffers

(defvar-local lisp-read-file--file nil
  "The absolute file name whose view the outline buffer shows.")

(defvar-local lisp-read-file--arguments nil
  "The tool arguments, besides path, of the view in the outline buffer.")

(defvar-local lisp-read-file--result nil
  "The structured result shown in the outline buffer.")

(defvar-local lisp-read-file--project nil
  "In a project outline buffer, what it shows: an alist.
Its keys are `root' (a directory name), `path' (relative to root)
and `arguments' (the other tool arguments).")

(define-button-type 'lisp-read-file-line
  'action #'lisp-read-file--button-action
  'follow-link t
  'face nil
  'mouse-face 'highlight
  'help-echo "mouse-2, RET: visit this line of the file")

(defun lisp-read-file--button-action (button)
  "Visit the file line of BUTTON."
  (lisp-read-file-visit-line (button-get button 'lisp-read-file-file)
                             (button-get button 'lisp-read-file-line)))

(defun lisp-read-file-visit-line (file line)
  "Visit FILE in another window and move to the start of LINE (1-based).
Point goes to the first non-blank character of the line."
  (let ((buffer (find-file-noselect file)))
    (pop-to-buffer buffer)
    (let ((position (save-excursion
                      (save-restriction
                        (widen)
                        (goto-char (point-min))
                        (forward-line (1- line))
                        (back-to-indentation)
                        (point)))))
      (unless (<= (point-min) position (point-max))
        (widen))
      (unless (= position (point))
        (push-mark nil t))
      (goto-char position))
    (lisp-read-file--warn-if-modified file)
    buffer))

(defun lisp-read-file--fontify-lisp (text)
  "Return TEXT, Lisp code, with the faces `lisp-mode' gives it."
  (with-temp-buffer
    (insert text)
    (delay-mode-hooks (lisp-mode))
    (ignore-errors (font-lock-ensure))
    (buffer-string)))

(defconst lisp-read-file--file-header-regexp
  "\\(?:==> \\(.+?\\) <==\\(.*\\)$\\|[0-9]+ \\([^[ ].*\\)$\\)"
  "Regexp matching the header line of a file in a project map.
The second form is the map's counts step, one line \"N PATH\" per file,
N its number of definitions.")

(defun lisp-read-file--view-line-regexp (mode)
  "Regexp matching a numbered line at point in a view of MODE.
The grep of a text file (\"text-filtered\") prints \"N:text\" and
\"N-text\" as grep -n does; the other views \" N: text\", padded."
  (if (equal mode "text-filtered")
      "\\([0-9]+\\)\\([:-]\\)"
    " *\\([0-9]+\\)\\([:-]\\)\\(?: \\|$\\)"))

(defun lisp-read-file--insert-view (text file mode &optional root)
  "Insert the view TEXT of FILE, in view MODE, with a button per numbered line.
With ROOT, TEXT is a project map: a header line \"==> PATH <==\" is a
button that visits PATH (relative to ROOT) and the numbered lines
after it visit lines of that file."
  (let ((start (point)))
    (insert text)
    (unless (or (string= text "") (bolp))
      (insert "\n"))
    (when (and lisp-read-file-fontify (or root (equal mode "lisp-collapsed")))
      (let ((fontified (lisp-read-file--fontify-lisp
                        (buffer-substring-no-properties start (point)))))
        (delete-region start (point))
        (insert fontified)))
    (save-excursion
      (goto-char start)
      (while (not (eobp))
        (let ((bol (point))
              (eol (line-end-position)))
          (cond
           ((looking-at (lisp-read-file--view-line-regexp mode))
            (put-text-property (match-beginning 1) (match-end 2)
                               'face 'lisp-read-file-line-number)
            (make-text-button bol eol
                              :type 'lisp-read-file-line
                              'lisp-read-file-file file
                              'lisp-read-file-line
                              (string-to-number (match-string 1))))
           ((and root (looking-at lisp-read-file--file-header-regexp))
            (setq file (expand-file-name (or (match-string-no-properties 1)
                                             (match-string-no-properties 3))
                                         root))
            (put-text-property bol eol 'face 'lisp-read-file-file-header)
            (make-text-button bol eol
                              :type 'lisp-read-file-line
                              'face 'lisp-read-file-file-header
                              'help-echo "mouse-2, RET: visit this file"
                              'lisp-read-file-header t
                              'lisp-read-file-file file
                              'lisp-read-file-line 1))
           ((looking-at "\\[.*\\]$\\|--$")
            (put-text-property bol eol 'face 'lisp-read-file-note)))
          (forward-line 1))))))

(defun lisp-read-file--header-line ()
  "Return the header line of an outline buffer."
  (let* ((result lisp-read-file--result)
         (meta (or (alist-get 'meta result) result))
         (pattern (or (alist-get 'name_pattern lisp-read-file--arguments)
                      (alist-get 'content_pattern lisp-read-file--arguments)))
         (buffer (and lisp-read-file--file
                      (find-buffer-visiting lisp-read-file--file))))
    (concat
     (format " %s  %s"
             (if lisp-read-file--project
                 (let ((root (abbreviate-file-name (alist-get 'root lisp-read-file--project)))
                       (path (alist-get 'path result)))
                   (if (member path '("." nil)) root (concat root path)))
               (alist-get 'path result))
             (alist-get 'mode result))
     (when (alist-get 'total_forms meta)
       (format "  %s forms" (alist-get 'total_forms meta)))
     (when pattern
       (format "  /%s/ expanded %s" pattern (or (alist-get 'expanded_forms meta) 0)))
     (when (alist-get 'truncated meta)
       "  [cut: see the footer]")
     (when (or (and buffer (buffer-modified-p buffer))
               (and lisp-read-file--project
                    (lisp-read-file--modified-buffers
                     (alist-get 'root lisp-read-file--project))))
       (propertize (if lisp-read-file--project
                       "  [buffers modified: showing the saved files]"
                     "  [buffer modified: showing the saved file]")
                   'face 'warning)))))

(defvar lisp-read-file-outline-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map (make-composed-keymap button-buffer-map
                                                 special-mode-map))
    (define-key map "n" #'lisp-read-file-next-line)
    (define-key map "p" #'lisp-read-file-previous-line)
    (define-key map (kbd "C-c C-o") lisp-read-file-command-map)
    map)
  "Keymap of `lisp-read-file-outline-mode'.")

(define-derived-mode lisp-read-file-outline-mode special-mode "LRF-Outline"
  "Major mode of the outline buffers of lisp-read-file.
Each numbered line is a button that visits that line of the file.
\\[xref-find-definitions] and \\[xref-find-references] on a name use the
lisp-read-file xref backend, as in `lisp-read-file-mode'.  The
commands of `lisp-read-file-command-map', under the same prefix key
as in that mode, work on the file shown (in a project outline, the
file of the section at point), and `imenu' jumps to the lines of this
buffer.

\\{lisp-read-file-outline-mode-map}"
  (setq-local revert-buffer-function #'lisp-read-file--revert)
  (setq-local header-line-format '(:eval (lisp-read-file--header-line)))
  (setq-local truncate-lines t)
  (setq-local imenu-create-index-function #'lisp-read-file--outline-imenu-index)
  (setq-local imenu-space-replacement nil)
  (add-hook 'xref-backend-functions #'lisp-read-file-xref-backend 0 t)
  (set-syntax-table lisp-mode-syntax-table))

(defun lisp-read-file-next-line (&optional n)
  "Move to the Nth next numbered line."
  (interactive "p")
  (forward-button (or n 1) nil nil t))

(defun lisp-read-file-previous-line (&optional n)
  "Move to the Nth previous numbered line."
  (interactive "p")
  (backward-button (or n 1) nil nil t))

(defun lisp-read-file--render (result arguments)
  "Fill the current outline buffer with RESULT, got with ARGUMENTS."
  (lisp-read-file--with-fewer-gcs
    (let ((inhibit-read-only t)
          (file (alist-get 'file result)))
      (erase-buffer)
      (lisp-read-file-outline-mode)
      (setq lisp-read-file--file file
            lisp-read-file--arguments arguments
            lisp-read-file--result result
            default-directory (file-name-directory file))
      (lisp-read-file--insert-view (alist-get 'content result) file
                                   (alist-get 'mode result))
      (when (lisp-read-file--over-cap-p result)
        (insert (propertize (lisp-read-file--raise-cap-note result)
                            'face 'lisp-read-file-note)))
      (goto-char (point-min)))))

(defun lisp-read-file--over-cap-p (result)
  "Return non-nil when RESULT is the refusal of a whole file over the size cap.
The view is then only the tool's note: cut, nothing to continue
from, no form and no line count."
  (let ((meta (alist-get 'meta result)))
    (and (alist-get 'truncated meta)
         (not (alist-get 'next_offset meta))
         (not (alist-get 'total_lines meta))
         (eql (alist-get 'total_forms meta) 0)
         (integerp (alist-get 'byte_length meta)))))

(defun lisp-read-file--raise-cap-note (result)
  "Return the note on reading the file of RESULT from Emacs.
The tool's note names its own arguments; here the cap is an argument
of the process, `lisp-read-file-arguments'.  The cap proposed is the
file's size rounded up to MiB."
  (let* ((bytes (alist-get 'byte_length (alist-get 'meta result)))
         (mib (* 1024 1024))
         (cap (* mib (max 1 (/ (+ bytes mib -1) mib)))))
    (format "[In Emacs: (setq lisp-read-file-arguments '(\"--max-file-bytes\" \"%d\")), \
then M-x lisp-read-file-shutdown and g here.]\n" cap)))

(defun lisp-read-file--revert (&rest _)
  "Ask the program again for the view of the outline buffer."
  (if lisp-read-file--project
      (let ((line (line-number-at-pos)))
        (lisp-read-file--render-project lisp-read-file--project)
        (forward-line (1- line)))
    (lisp-read-file--revert-file)))

(defun lisp-read-file--revert-file ()
  "Ask the program again for the view of the file of the outline buffer."
  (let ((line (line-number-at-pos))
        (result (lisp-read-file-call lisp-read-file--file
                                      lisp-read-file--arguments)))
    (lisp-read-file--render result lisp-read-file--arguments)
    (forward-line (1- line))
    (lisp-read-file--warn-if-modified lisp-read-file--file)))

(defun lisp-read-file--show (file arguments name)
  "Show the view of FILE got with ARGUMENTS in the buffer called NAME.
Return the buffer."
  (let ((result (lisp-read-file-call file arguments))
        (buffer (get-buffer-create name)))
    (with-current-buffer buffer
      (lisp-read-file--render result arguments))
    (lisp-read-file--warn-if-modified (alist-get 'file result))
    (pop-to-buffer buffer)
    buffer))

(defun lisp-read-file--goto-source-line (line)
  "Move to the last numbered line of the outline buffer at or before LINE.
Return its position, or nil (point stays) when there is none."
  (let ((target nil)
        (button (next-button (point-min) t)))
    (while (and button (<= (button-get button 'lisp-read-file-line) line))
      (setq target (button-start button)
            button (next-button (button-end button))))
    (when target
      (goto-char target))))

(defun lisp-read-file--section-file ()
  "Return the file of the project outline's section at point, or nil."
  (save-excursion
    (end-of-line)
    (and (re-search-backward (concat "^" lisp-read-file--file-header-regexp) nil t)
         (get-text-property (point) 'lisp-read-file-file))))

(defun lisp-read-file--source-line ()
  "Return the line of the file that point is on, or nil.
In a buffer visiting a file its line; in an outline buffer the line
of the numbered line at point."
  (cond (lisp-read-file--result
         (let ((button (button-at (line-beginning-position))))
           (and button (not (button-get button 'lisp-read-file-header))
                (button-get button 'lisp-read-file-line))))
        (buffer-file-name (line-number-at-pos))))

(defun lisp-read-file--buffer-name (kind file)
  "Return the name of the outline buffer of KIND for FILE."
  (let ((file (lisp-read-file--true-file file)))
    (format "*lisp-read-file %s: %s*" kind
            (file-relative-name file (lisp-read-file--root file)))))

(defun lisp-read-file--current-file ()
  "Return the file of the current buffer, or signal a `user-error'.
In a project outline, that is the file of the section at point."
  (let ((file (or lisp-read-file--file
                  (and lisp-read-file--project (lisp-read-file--section-file))
                  buffer-file-name)))
    (unless file
      (user-error "Buffer %s is not visiting a file" (buffer-name)))
    (unless (file-exists-p file)
      (user-error "File %s is not saved yet" file))
    file))

(defcustom lisp-read-file-outline-limit 20000
  "Most lines an outline buffer of one file shows.
The tool pages its views (2000 lines by default); an outline buffer
asks for this many lines at once, so that a long file's outline is
whole.  A view cut at this limit ends with a note."
  :type 'integer
  :group 'lisp-read-file)

(defun lisp-read-file--view-arguments ()
  "Return the tool arguments of every view of a file shown in a buffer.
Line numbers make every line of a raw view (non-Lisp files) a button."
  `((line_numbers . t) (limit . ,lisp-read-file-outline-limit)))

;;;###autoload
(defun lisp-read-file-outline (&optional file)
  "Show the collapsed view of FILE, by default the file of this buffer.
Each numbered line is a button that visits its line; point starts
on the form at or before point in the source buffer.  A directory
FILE gets its project map (`lisp-read-file-project-outline')."
  (interactive)
  (if (and file (file-directory-p file))
      (lisp-read-file-project-outline file)
    (lisp-read-file--outline-file file)))

(defun lisp-read-file--outline-file (file)
  "Show the collapsed view of FILE, by default the file of this buffer."
  (let* ((current (ignore-errors (lisp-read-file--current-file)))
         (file (or file current (lisp-read-file--current-file)))
         (line (and current (file-equal-p current file)
                    (lisp-read-file--source-line)))
         (buffer (lisp-read-file--show
                  file (lisp-read-file--view-arguments)
                  (lisp-read-file--buffer-name "outline" file))))
    (when line
      (with-current-buffer buffer
        (lisp-read-file--goto-source-line line)))
    buffer))

;;;###autoload
(defun lisp-read-file-find-file-outline (file)
  "Read a file name in the project and show the collapsed view of FILE.
The buttons of the outline buffer visit FILE.  For a file that is
not Lisp the view is its text, every line numbered."
  (interactive
   (list (read-file-name
          "Outline of file: "
          (let ((current (or lisp-read-file--file buffer-file-name)))
            (if current
                (lisp-read-file--root (lisp-read-file--true-file current))
              default-directory))
          nil t)))
  (lisp-read-file-outline (expand-file-name file)))

(defun lisp-read-file--outline-line-head ()
  "Return (OPERATOR NAME) of the definition on the numbered line at point, or nil.
NAME is the symbol's: a method gives \"area\", not \"area (shape)\".
A form whose operator does not hold \"def\" (declaim, in-package)
names no definition: nil."
  (let ((line (buffer-substring-no-properties (line-beginning-position)
                                              (line-end-position))))
    (when (string-match lisp-read-file--numbered-line-regexp line)
      (let ((parsed (lisp-read-file--parse-signature (substring line (match-end 0)))))
        (when (and (car parsed) (string-match-p "def" (car parsed))
                   (cadr parsed) (string-match "\\`[^ (]+" (cadr parsed)))
          (list (car parsed) (match-string 0 (cadr parsed))))))))

(defun lisp-read-file--outline-symbol-at-point ()
  "Return the symbol at point of an outline buffer, or nil.
On a line's number, its form's operator or between tokens, the
name of the form on that line."
  (let ((symbol (thing-at-point 'symbol t))
        (head (lisp-read-file--outline-line-head)))
    (cond ((and head (or (null symbol)
                         (string-match-p "\\`[0-9]+[:-]?\\'" symbol)
                         (equal (lisp-read-file--strip-package symbol) (car head))))
           (cadr head))
          ((and symbol (string-match-p "\\`[0-9]+[:-]?\\'" symbol)) nil)
          (t symbol))))

(defun lisp-read-file--default-pattern ()
  "Return the default pattern of `lisp-read-file-expand', or nil.
That is the symbol at point, without package prefix, anchored; in
an outline buffer as `lisp-read-file--outline-symbol-at-point' says."
  (let ((symbol (if lisp-read-file--result
                    (lisp-read-file--outline-symbol-at-point)
                  (thing-at-point 'symbol t))))
    (when (and symbol (not (string-match-p "\\`[0-9.]+\\'" symbol)))
      (when (string-match "\\`[^:|\"]*::?\\([^:]+\\)\\'" symbol)
        (setq symbol (match-string 1 symbol)))
      (concat "^" (lisp-read-file--regexp-quote symbol) "$"))))

(defvar lisp-read-file--expand-history nil
  "History of the patterns of `lisp-read-file-expand'.")

;;;###autoload
(defun lisp-read-file-expand (pattern &optional file)
  "Expand the definitions whose name matches PATTERN in FILE.
FILE defaults to the file of this buffer.  PATTERN is a regular
expression in Rust syntax, matched without case against names as
written, and for methods also against NAME QUALIFIERS (SPECIALIZERS),
e.g. \"area :around (shape)\".  Interactively the default is the
symbol at point, anchored: \"^with-shape$\".

The buffer shows the whole collapsed view with the matching forms
verbatim, every line numbered and a button; point starts on the
first expanded line."
  (interactive
   (let ((default (lisp-read-file--default-pattern)))
     (list (read-string (if default
                            (format "Expand definitions matching (default %s): "
                                    default)
                          "Expand definitions matching: ")
                        nil 'lisp-read-file--expand-history default))))
  (when (or (not (stringp pattern)) (string= pattern ""))
    (user-error "No pattern given"))
  (let* ((file (or file (lisp-read-file--current-file)))
         (collapsed (alist-get 'content
                               (lisp-read-file-call
                                file (lisp-read-file--view-arguments))))
         (buffer (lisp-read-file--show
                  file `((name_pattern . ,pattern)
                         ,@(lisp-read-file--view-arguments))
                  (lisp-read-file--buffer-name "expand" file))))
    (with-current-buffer buffer
      (let ((meta (alist-get 'meta lisp-read-file--result))
            (outline-lines (make-hash-table :test #'equal))
            (first nil))
        (dolist (line (split-string collapsed "\n"))
          (puthash line t outline-lines))
        (save-excursion
          (goto-char (point-min))
          (while (and (not first) (not (eobp)))
            (let ((line (buffer-substring-no-properties (point) (line-end-position))))
              (when (and (string-match-p (if (equal (alist-get 'mode lisp-read-file--result)
                                                      "text-filtered")
                                                 "\\`[0-9]+:"
                                               "\\` *[0-9]+: ")
                                             line)
                         (not (gethash line outline-lines)))
                (setq first (point))))
            (forward-line 1)))
        ;; A form of one line reads the same expanded: ask where the matches are.
        (unless (eql (alist-get 'expanded_forms meta) 0)
          (let ((line (lisp-read-file--first-match-line file pattern)))
            (when line
              (save-excursion
                (goto-char (point-min))
                (when (lisp-read-file--goto-source-line line)
                  (setq first (min (point) (or first (point)))))))))
        (when first
          (goto-char first)
          (dolist (window (get-buffer-window-list buffer nil t))
            (set-window-point window first)))
        (when (eql (alist-get 'expanded_forms meta) 0)
          (message "No definition matched %s" pattern))))
    buffer))

(defun lisp-read-file--first-match-line (file pattern)
  "Return the first line of FILE where a definition's name matches PATTERN, or nil.
The lisp-find tool matches names by the rule of the view's
name_pattern; nil when it cannot answer."
  (let* ((file (lisp-read-file--true-file file))
         (root (lisp-read-file--root file))
         (definitions
          (ignore-errors
            (alist-get 'definitions
                       (lisp-read-file-find
                        `((name_pattern . ,pattern)
                          (path . ,(file-relative-name file root)))
                        root)))))
    (and definitions
         (apply #'min (mapcar (lambda (definition) (alist-get 'line definition))
                              definitions)))))

;;;; Imenu

(defun lisp-read-file--imenu-group (operator)
  "Return the group of `lisp-read-file-imenu-groups' for OPERATOR, or nil."
  (cl-loop for (group . operators) in lisp-read-file-imenu-groups
           when (or (member operator operators)
                    (and (memq t operators)
                         (string-prefix-p "def" operator)))
           return group))

;;;###autoload
(defun lisp-read-file-imenu-create-index ()
  "Return an `imenu' index of the current buffer's file, from its outline.
Definitions are grouped as `lisp-read-file-imenu-groups' says; each
entry's position is the start of its form's first line.  A name
given to several entries of a group is followed by the reader
conditionals in front of each (a container's included), and when
that is not enough by its line: \"f #+sbcl\", \"f [line 12]\".  The
index is of the file as saved; a message warns when the buffer is
modified.  A buffer without a file gets the index of the function
that was in use before `lisp-read-file-mode'."
  (if (not (and buffer-file-name (file-exists-p buffer-file-name)))
      (funcall (or (cdr lisp-read-file--saved-imenu-function)
                   #'imenu-default-create-index-function))
    (lisp-read-file--with-fewer-gcs
      (let ((entries (lisp-read-file--imenu-entries
                      (lisp-read-file--call-pages buffer-file-name '((collapsed . t))))))
        (lisp-read-file--warn-if-modified buffer-file-name)
        (lisp-read-file--imenu-index
         entries (lisp-read-file--source-positions (mapcar #'cl-third entries)))))))

(defun lisp-read-file--imenu-index (entries positions)
  "Return the imenu index of ENTRIES, grouped by `lisp-read-file-imenu-groups'.
ENTRIES are values of `lisp-read-file--imenu-entries'; POSITIONS is
a hash table from their lines to their positions.  An entry whose
line has no position is left out."
  (if (not lisp-read-file-imenu-groups)
      (lisp-read-file--imenu-items entries positions)
    (cl-loop for (group . _) in lisp-read-file-imenu-groups
             for items = (lisp-read-file--imenu-items
                          (cl-remove-if-not (lambda (entry) (equal (car entry) group))
                                            entries)
                          positions)
             when items
             collect (cons group items))))

(defun lisp-read-file--outline-imenu-index ()
  "Return the `imenu' index of an outline buffer, at its own lines.
The definitions of the file shown, grouped as in a Lisp buffer, each
at its numbered line here; in a project outline a submenu per file."
  (if lisp-read-file--project
      (lisp-read-file--project-imenu-index)
    (lisp-read-file--imenu-index
     (lisp-read-file--imenu-entries
      (lisp-read-file--call-pages lisp-read-file--file '((collapsed . t))))
     (lisp-read-file--button-positions (point-min) (point-max)))))

(defun lisp-read-file--project-imenu-index ()
  "Return the `imenu' index of a project outline: a submenu per file."
  (let ((header (concat "^" lisp-read-file--file-header-regexp))
        (index nil))
    (save-excursion
      (goto-char (point-min))
      (while (re-search-forward header nil t)
        (let* ((file (or (match-string-no-properties 1)
                         (match-string-no-properties 3)))
               (start (line-beginning-position 2))
               (end (save-excursion
                      (if (re-search-forward header nil t) (line-beginning-position)
                        (point-max))))
               (items (lisp-read-file--imenu-index
                       (lisp-read-file--imenu-entries
                        (list (list (cons 'content (buffer-substring-no-properties
                                                    start end)))))
                       (lisp-read-file--button-positions start end))))
          (when items
            (push (cons file items) index)))))
    (nreverse index)))

(defun lisp-read-file--button-positions (start end)
  "Return a hash table from file lines to the numbered lines between START and END.
Each line of the file maps to the start of the first numbered line
that visits it."
  (let ((positions (make-hash-table))
        (button (next-button start t)))
    (while (and button (< (button-start button) end))
      (unless (or (button-get button 'lisp-read-file-header)
                  (gethash (button-get button 'lisp-read-file-line) positions))
        (puthash (button-get button 'lisp-read-file-line) (button-start button) positions))
      (setq button (next-button (button-start button))))
    positions))

(defun lisp-read-file--source-positions (lines)
  "Return a hash table from LINES, ascending, to their positions in this buffer.
The position of a line is its first non-blank character, a marker
when `imenu-use-markers' is non-nil."
  (let ((positions (make-hash-table))
        (current 1))
    (save-excursion
      (save-restriction
        (widen)
        (goto-char (point-min))
        (dolist (line lines)
          (forward-line (- line current))
          (setq current line)
          (puthash line (save-excursion
                          (back-to-indentation)
                          (if imenu-use-markers (point-marker) (point)))
                   positions))))
    positions))

(defun lisp-read-file--imenu-entries (results)
  "Return the definitions of the outline RESULTS, in file order.
Each is (GROUP NAME LINE CONDITIONALS): GROUP as
`lisp-read-file--imenu-group' gives it (t in a flat index),
CONDITIONALS the reader conditionals in front of the form and of the
containers around it, outermost first.  Forms of no group are left out."
  (let ((entries nil)
        ;; The conditionals of the last line at each depth of containers.
        (stack nil))
    (dolist (result results)
      (pcase-dolist (`(,line . ,rest) (lisp-read-file--numbered-lines
                                       (alist-get 'content result)))
        (let* ((depth (/ (- (length rest) (length (string-trim-left rest))) 2))
               (parsed (lisp-read-file--parse-signature rest))
               (outer (cl-subseq stack 0 (min depth (length stack))))
               (operator (car parsed))
               (group (and operator
                           (if lisp-read-file-imenu-groups
                               (lisp-read-file--imenu-group operator)
                             (string-prefix-p "def" operator)))))
          (setq stack (append outer (list (nth 2 parsed))))
          (when (and group (cadr parsed))
            (push (list group (cadr parsed) line (apply #'append stack)) entries)))))
    (nreverse entries)))

(defun lisp-read-file--imenu-items (entries positions)
  "Return the imenu items (NAME . POSITION) of ENTRIES, one name each.
ENTRIES are values of `lisp-read-file--imenu-entries' in file order,
POSITIONS a hash table from their lines to positions; a name shared
by several is made distinct as `lisp-read-file-imenu-create-index'
says."
  (let ((named (lisp-read-file--distinct-names
                (lisp-read-file--distinct-names
                 (mapcar (lambda (entry) (cons (nth 1 entry) entry)) entries)
                 (lambda (name entry)
                   (if (nth 3 entry)
                       (mapconcat #'identity (cons name (nth 3 entry)) " ")
                     name)))
                (lambda (name entry) (format "%s [line %d]" name (nth 2 entry))))))
    (delq nil (mapcar (lambda (item)
                        (let ((position (gethash (nth 2 (cdr item)) positions)))
                          (and position (cons (car item) position))))
                      named))))

(defun lisp-read-file--distinct-names (named rename)
  "Rename the elements of NAMED whose name is shared, with RENAME.
NAMED is a list of (NAME . ENTRY); RENAME is called with NAME and
ENTRY and returns the new name.  Return the list with the new names."
  (let ((counts (make-hash-table :test #'equal)))
    (dolist (item named)
      (puthash (car item) (1+ (gethash (car item) counts 0)) counts))
    (mapcar (lambda (item)
              (if (> (gethash (car item) counts) 1)
                  (cons (funcall rename (car item) (cdr item)) (cdr item))
                item))
            named)))

;;;; Project outline

(defvar lisp-read-file--kinds-history nil
  "History of the kinds of `lisp-read-file-project-outline'.")

(defvar lisp-read-file--features-history nil
  "History of the features of `lisp-read-file-project-outline'.")

(defconst lisp-read-file--kind-names
  '("defpackage" "defsystem" "defvar" "defparameter" "defconstant" "defclass"
    "defstruct" "deftype" "define-condition" "defgeneric" "defmethod" "defun"
    "defmacro" "define-compiler-macro" "defsetf" "define-setf-expander"
    "in-package" "eval-when")
  "Usual operators, offered as the kinds of a project outline.")

(defun lisp-read-file--asd-at-point ()
  "Return the .asd file or directory at point, the .asd of this buffer, or nil.
A directory counts in Dired only (its line names it), not as a file
name in text."
  (let ((in-dired (and (derived-mode-p 'dired-mode)
                       (fboundp 'dired-get-filename)
                       (ignore-errors (dired-get-filename nil t)))))
    (if (and in-dired (file-directory-p in-dired))
        in-dired
      (cl-find-if (lambda (file)
                    (and file (string-match-p "\\.asd\\'" file)
                         (file-regular-p file)))
                  (list in-dired
                        (let ((name (thing-at-point 'filename t)))
                          (and name (expand-file-name name)))
                        buffer-file-name)))))

(defun lisp-read-file--read-list (prompt candidates history)
  "Read a list of strings with PROMPT, completing from CANDIDATES.
HISTORY is the history variable.
Return a vector (JSON array) or nil for an empty answer."
  (let ((answer (completing-read-multiple prompt candidates nil nil nil history)))
    (and answer (vconcat answer))))

;;;###autoload
(defun lisp-read-file-project-outline (&optional path kinds features)
  "Show the project map of PATH: every Lisp file's collapsed view.
PATH is a directory or an .asd file; interactively the .asd file at
point (in Dired, or a file name at point) or the directory at point
in Dired, else the project root of this buffer.  Each file starts
with a header line \"==> FILE <==\"; headers and numbered lines are
buttons that visit the file and line.  KINDS (operator names) keeps
only those forms, FEATURES hides the forms #+/#- exclude under those
features; with a prefix argument
both are read, several separated by commas."
  (interactive
   (list (lisp-read-file--asd-at-point)
         (and current-prefix-arg
              (lisp-read-file--read-list "Kinds (comma-separated, empty for all): "
                                         lisp-read-file--kind-names
                                         'lisp-read-file--kinds-history))
         (and current-prefix-arg
              (lisp-read-file--read-list "Features (comma-separated): "
                                         '("sbcl" "ccl" "ecl" "clisp" "abcl"
                                           "allegro" "lispworks" "x86-64")
                                         'lisp-read-file--features-history))))
  (let* ((path (and path (lisp-read-file--true-file path)))
         (root (if (and path (not (file-directory-p path)))
                   (lisp-read-file--root path)
                 (if path
                     (lisp-read-file--directory-root path)
                   (lisp-read-file--buffer-root))))
         (relative (if path
                       (directory-file-name
                        (file-relative-name path root))
                     "."))
         (arguments (append (and kinds `((kinds . ,(vconcat kinds))))
                            (and features `((features . ,(vconcat features))))))
         (project `((root . ,root) (path . ,relative) (arguments . ,arguments)))
         (source (let ((file (ignore-errors (lisp-read-file--current-file)))
                       (line (lisp-read-file--source-line)))
                   (and file line (cons (lisp-read-file--true-file file) line))))
         (buffer (get-buffer-create
                  (format "*lisp-read-file project: %s*"
                          (if (equal relative ".")
                              (file-name-nondirectory (directory-file-name root))
                            relative)))))
    (with-current-buffer buffer
      (lisp-read-file--render-project project)
      (when source
        (lisp-read-file--goto-project-line (car source) (cdr source))))
    (lisp-read-file--warn-if-modified-under root)
    (pop-to-buffer buffer)
    (when source
      (set-window-point (selected-window) (with-current-buffer buffer (point))))
    buffer))

(defun lisp-read-file--goto-project-line (file line)
  "Move to the button of FILE at or before LINE in the project outline.
That is the last numbered line of FILE's section not after LINE,
else FILE's header; point stays when FILE has no section."
  (let ((target nil)
        (button (next-button (point-min) t)))
    (while button
      (when (and (equal (button-get button 'lisp-read-file-file) file)
                 (<= (button-get button 'lisp-read-file-line) line))
        (setq target (button-start button)))
      (setq button (next-button (button-start button))))
    (when target
      (goto-char target))))

(defun lisp-read-file--render-project (project)
  "Fill the current outline buffer with the project map of PROJECT.
PROJECT is a value of `lisp-read-file--project'.  A map that is cut
is continued from its `next_offset', up to 50 calls."
  (let* ((root (alist-get 'root project))
         (arguments (cons (cons 'path (alist-get 'path project))
                          (alist-get 'arguments project)))
         (results nil)
         (offset nil)
         (pages 0))
    (while (progn
             (let ((result (lisp-read-file--call-tool
                            root lisp-read-file-tool-name
                            (if offset (cons (cons 'offset offset) arguments)
                              arguments))))
               (push result results)
               (cl-incf pages)
               (setq offset (or (alist-get 'next_offset (alist-get 'meta result))
                                (alist-get 'next_offset result)))
               (and (integerp offset) (< pages 50)))))
    (lisp-read-file--insert-project (nreverse results) project root)))

(defun lisp-read-file--insert-project (results project root)
  "Fill the current buffer with RESULTS, the pages of the map of PROJECT in ROOT."
  (lisp-read-file--with-fewer-gcs
    (let ((inhibit-read-only t))
      (erase-buffer)
      (lisp-read-file-outline-mode)
      (setq lisp-read-file--project project
            lisp-read-file--result (append `((root . ,root)) (car results))
            default-directory root)
      (dolist (result results)
        (lisp-read-file--insert-view (alist-get 'content result) nil
                                     (alist-get 'mode result) root))
      ;; A map cut down to names or counts ends with the tool's note, in its terms.
      (when (member (alist-get 'step (car (last results))) '("names" "counts"))
        (insert (propertize "[In Emacs: C-u M-x lisp-read-file-project-outline asks for \
kinds; M-x lisp-read-file-project-outline on a directory's line in Dired shows its map.]\n"
                            'face 'lisp-read-file-note)))
      (goto-char (point-min)))))

(provide 'lisp-read-file-outline)
;;; lisp-read-file-outline.el ends here
