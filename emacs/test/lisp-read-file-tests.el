;;; lisp-read-file-tests.el --- Tests of the lisp-read-file package  -*- lexical-binding: t; -*-

;;; Commentary:

;; ERT tests of the Emacs companion, run in batch Emacs against the
;; real lisp-read-file program: the environment variable
;; LISP_READ_FILE_BIN names it, else ../../target/release/lisp-read-file
;; relative to this file.  Run them with emacs/test/run-tests.sh.
;;
;; Each test copies fixtures/demo/demo.lisp into a fresh temporary
;; project (a directory with .git) as src/demo.lisp; the tests of xref
;; and the project outline copy the multi-file project fixtures/project
;; (an .asd, a package, a generic function with methods in two other
;; files, the symbol in strings and comments) instead.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'checkdoc)
(require 'lisp-read-file)
(require 'lisp-read-file-outline)
(require 'lisp-read-file-xref)

(defconst lrf-test-directory
  (file-name-directory (or load-file-name buffer-file-name))
  "The directory of this file.")

(defconst lrf-test-repository
  (expand-file-name "../../" lrf-test-directory)
  "The root of the lisp-read-file repository.")

(defconst lrf-test-program
  (let ((env (getenv "LISP_READ_FILE_BIN")))
    (expand-file-name
     (if (and env (not (string= env "")))
         env
       (expand-file-name "../../target/release/lisp-read-file" lrf-test-directory))))
  "The lisp-read-file program under test.")

(defconst lrf-test-demo-lines '(2 6 8 11 16 19 22 25 30 31)
  "The numbered lines of the collapsed view of demo.lisp.")

(defvar lrf-test-project nil
  "The temporary project directory of the running test.")

(defmacro lrf-test-with-project (&rest body)
  "Run BODY in a temporary project holding src/demo.lisp and notes.txt.
`lrf-test-project' is the project directory; the companion
processes are stopped and the project's buffers killed afterwards."
  (declare (indent 0) (debug t))
  `(let* ((lrf-test-project (file-name-as-directory
                             (file-truename (make-temp-file "lrf-test-" t))))
          (lisp-read-file-executable lrf-test-program)
          (lisp-read-file-arguments nil)
          (lisp-read-file-timeout 10))
     (unwind-protect
         (progn
           (unless (file-executable-p lrf-test-program)
             (error "The lisp-read-file program %s is missing: run \
cargo build --release, or set LISP_READ_FILE_BIN" lrf-test-program))
           (make-directory (expand-file-name ".git" lrf-test-project))
           (make-directory (expand-file-name "src" lrf-test-project))
           (copy-file (expand-file-name "fixtures/demo/demo.lisp" lrf-test-repository)
                      (lrf-test-file "src/demo.lisp"))
           (with-temp-file (lrf-test-file "notes.txt")
             (insert "alpha\nbeta TODO one\ngamma\n"))
           ,@body)
       (lisp-read-file-shutdown)
       (dolist (buffer (buffer-list))
         (let ((file (buffer-local-value 'buffer-file-name buffer)))
           (when (or (and file (string-prefix-p lrf-test-project (file-truename file)))
                     (string-prefix-p "*lisp-read-file" (buffer-name buffer)))
             (with-current-buffer buffer (set-buffer-modified-p nil))
             (kill-buffer buffer))))
       (delete-directory lrf-test-project t))))

(defun lrf-test-file (name)
  "Return the absolute name of NAME in the test project."
  (expand-file-name name lrf-test-project))

(defun lrf-test-connection ()
  "Return the connection of the test project."
  (gethash lrf-test-project lisp-read-file--connections))

(defun lrf-test-buttons ()
  "Return the positions of the buttons of the current buffer."
  (let ((positions nil)
        (button (next-button (point-min) t)))
    (while button
      (push (button-start button) positions)
      (setq button (next-button (button-start button))))
    (nreverse positions)))

(defun lrf-test-button-lines ()
  "Return the file lines of the buttons of the current buffer."
  (mapcar (lambda (position) (get-text-property position 'lisp-read-file-line))
          (lrf-test-buttons)))

(defun lrf-test-first-token (string)
  "Return the first whitespace-separated token of STRING."
  (car (split-string string)))

(defun lrf-test-check-buttons (outline file)
  "Push every button of the buffer OUTLINE; check it visits its line of FILE.
Each button must select the buffer of FILE, put point on the
button's line, and that line must start (after indentation) with the
first token of the button's text.  Return the lines visited."
  (let ((source (find-file-noselect file))
        (visited nil)
        (before nil))
    (dolist (position (with-current-buffer outline (lrf-test-buttons)))
      (let* ((line (with-current-buffer outline
                     (get-text-property position 'lisp-read-file-line)))
             (text (with-current-buffer outline
                     (save-excursion
                       (goto-char position)
                       (and (looking-at " *[0-9]+[:-] ?\\(.*\\)$")
                            (match-string-no-properties 1))))))
        (pop-to-buffer outline)
        (goto-char position)
        (setq before (with-current-buffer source (point)))
        ;; RET on the button, as a user would type it.
        (call-interactively (key-binding (kbd "RET")))
        ;; The position left is on the mark ring.
        (unless (= (point) before)
          (should (= (mark t) before)))
        (should (eq (current-buffer) source))
        (should (eq (window-buffer (selected-window)) source))
        (should (= (line-number-at-pos) line))
        (should (= (point) (save-excursion (back-to-indentation) (point))))
        (unless (string-match-p "\\`[ \t]*\\'" text)
          (should (equal (lrf-test-first-token
                          (buffer-substring-no-properties (point) (line-end-position)))
                         (lrf-test-first-token text))))
        (push line visited)))
    (nreverse visited)))

;;;; The package itself

(defconst lrf-test-package-files
  '("lisp-read-file.el" "lisp-read-file-outline.el" "lisp-read-file-xref.el")
  "The files of the package, the main file first.")

(defun lrf-test-package-file (name)
  "Return the absolute name of the package file NAME."
  (expand-file-name (concat "../" name) lrf-test-directory))

(ert-deftest lrf-test-byte-compile ()
  "Every file of the package byte-compiles without any warning."
  (let ((directory (make-temp-file "lrf-elc-" t))
        (byte-compile-error-on-warn t))
    (unwind-protect
        (let ((load-path (cons directory load-path)))
          (dolist (name lrf-test-package-files)
            (copy-file (lrf-test-package-file name) (expand-file-name name directory)))
          (dolist (name lrf-test-package-files)
            (let ((source (expand-file-name name directory)))
              (should (eq (byte-compile-file source) t))
              (should (file-exists-p (concat source "c"))))))
      (delete-directory directory t))))

(ert-deftest lrf-test-checkdoc ()
  "Every file of the package passes `checkdoc' without a complaint."
  (let ((complaints nil))
    (cl-letf (((symbol-function 'checkdoc-error)
               (lambda (_point message) (push message complaints))))
      (dolist (name lrf-test-package-files)
        (checkdoc-file (lrf-test-package-file name))))
    (should (equal complaints nil))))

(ert-deftest lrf-test-headers ()
  "Every file has the headers `package.el' reads; the main file the requirements."
  (require 'lisp-mnt)
  (dolist (name lrf-test-package-files)
    (with-temp-buffer
      (insert-file-contents (lrf-test-package-file name))
      (should (equal (lm-header "Version") lisp-read-file-version))
      (should (string-prefix-p "https://" (lm-header "URL")))
      (if (equal name "lisp-read-file.el")
          (should (string-match-p "(emacs \"27.1\")" (lm-header "Package-Requires")))
        ;; package-lint: Package-Requires outside the main file have no effect.
        (should-not (lm-header "Package-Requires")))
      (should (lm-summary))
      (should (lm-commentary-mark))
      (should (lm-code-mark))
      (goto-char (point-max))
      (should (re-search-backward
               (concat "^;;; " (regexp-quote name) " ends here") nil t)))))

(ert-deftest lrf-test-autoloads ()
  "Requiring `lisp-read-file' alone makes the commands of the other files work.
In a fresh Emacs, each function the main file autoloads is an
autoload that loads its file and is then defined there."
  (let* ((directory (file-name-directory (locate-library "lisp-read-file")))
         (functions '(lisp-read-file-outline lisp-read-file-expand
                      lisp-read-file-find-file-outline lisp-read-file-project-outline
                      lisp-read-file-imenu-create-index lisp-read-file-xref-backend))
         (form `(progn
                  (require 'lisp-read-file)
                  (dolist (f ',functions)
                    (unless (autoloadp (symbol-function f))
                      (error "Not an autoload: %s" f)))
                  (dolist (f ',functions)
                    (when (autoloadp (symbol-function f))
                      (autoload-do-load (symbol-function f) f))
                    (when (autoloadp (symbol-function f))
                      (error "Not defined by its file: %s" f)))
                  (princ (mapconcat (lambda (f) (file-name-base (symbol-file f 'defun)))
                                    ',functions " "))))
         (output (with-temp-buffer
                   (list (call-process (expand-file-name invocation-name invocation-directory)
                                       nil t nil "--batch" "-Q" "-L" directory
                                       "--eval" (prin1-to-string form))
                         (buffer-string)))))
    (should (equal output
                   (list 0 (concat "lisp-read-file-outline lisp-read-file-outline "
                                   "lisp-read-file-outline lisp-read-file-outline "
                                   "lisp-read-file-outline lisp-read-file-xref"))))))

;;;; The companion process

(ert-deftest lrf-test-process-start ()
  "The first call starts one initialized process per root, then reuses it."
  (lrf-test-with-project
    (should (null (lrf-test-connection)))
    (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
    (let* ((conn (lrf-test-connection))
           (process (lisp-read-file--conn-process conn))
           (info (lisp-read-file--conn-server-info conn)))
      (should (process-live-p process))
      (should (equal (process-command process)
                     (list lrf-test-program "mcp" "--root"
                           (directory-file-name lrf-test-project))))
      (should (equal (alist-get 'protocolVersion info) "2025-06-18"))
      (should (equal (alist-get 'name (alist-get 'serverInfo info)) "lisp-read-file"))
      (should (assq 'tools (alist-get 'capabilities info)))
      ;; The root is the project (the directory with .git), not src/.
      (with-current-buffer "*lisp-read-file outline: src/demo.lisp*"
        (should (equal (alist-get 'path lisp-read-file--result) "src/demo.lisp")))
      (lisp-read-file-outline (lrf-test-file "notes.txt"))
      (should (eq (lisp-read-file--conn-process (lrf-test-connection)) process))
      (should (= (hash-table-count lisp-read-file--connections) 1)))))

(ert-deftest lrf-test-stderr-separate ()
  "The server's standard error goes to its own buffer, not into the JSON stream."
  (lrf-test-with-project
    (let ((lisp-read-file-arguments '("--log-level" "debug")))
      (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
      (lisp-read-file-expand "with-shape" (lrf-test-file "src/demo.lisp"))
      (let ((conn (lrf-test-connection)))
        (should (member "--log-level" (process-command (lisp-read-file--conn-process conn))))
        (with-current-buffer (lisp-read-file--conn-stderr-buffer conn)
          (should (> (buffer-size) 0))
          (should-not (string-match-p "\"jsonrpc\"" (buffer-string))))))))

(ert-deftest lrf-test-process-killed ()
  "A process that died is replaced by a new one on the next call."
  (lrf-test-with-project
    (let ((file (lrf-test-file "src/demo.lisp")))
      (lisp-read-file-outline file)
      (let ((first (lisp-read-file--conn-process (lrf-test-connection))))
        ;; Killed and reaped: the next call starts a new process.
        (delete-process first)
        (with-current-buffer (lisp-read-file-outline file)
          (should (equal (lrf-test-button-lines) lrf-test-demo-lines)))
        (let ((second (lisp-read-file--conn-process (lrf-test-connection))))
          (should-not (eq first second))
          (should (process-live-p second))
          ;; Killed by a signal, and called at once, before Emacs has
          ;; noticed: the call is made again on a new process.
          (signal-process second 'KILL)
          (with-current-buffer (lisp-read-file-expand "with-shape" file)
            (should (string-match-p "^33:     `(let ((,var ,shape))$" (buffer-string))))
          (let ((third (lisp-read-file--conn-process (lrf-test-connection))))
            (should-not (eq third second))
            (should (process-live-p third))
            (should-not (process-live-p second))))))))

(ert-deftest lrf-test-missing-executable ()
  "A missing program is a `user-error' that names `lisp-read-file-executable'."
  (lrf-test-with-project
    (dolist (program '("/nonexistent/bin/lisp-read-file" "lisp-read-file-no-such-program"))
      (let* ((lisp-read-file-executable program)
             (err (should-error (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
                                :type 'user-error))
             (message (error-message-string err)))
        (should (string-match-p "lisp-read-file-executable" message))
        (should (string-match-p (regexp-quote program) message))
        (should (null (lrf-test-connection)))))))

(ert-deftest lrf-test-program-exits ()
  "A program that exits at once: the error quotes its standard error."
  (lrf-test-with-project
    (let ((script (lrf-test-file "fake-server")))
      (with-temp-file script
        (insert "#!/bin/sh\necho 'fake-server: cannot serve today' >&2\nexit 3\n"))
      (set-file-modes script #o755)
      (let* ((lisp-read-file-executable script)
             (err (should-error (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
                                :type 'error)))
        (should (string-match-p "\\`lisp-read-file: lisp-read-file<.*> is not running (exit 3); \
its standard error says: fake-server: cannot serve today\\'"
                                (error-message-string err)))))))

(ert-deftest lrf-test-timeout ()
  "A program that never answers times out, and is stopped."
  (lrf-test-with-project
    (let ((script (lrf-test-file "mute-server")))
      (with-temp-file script
        (insert "#!/bin/sh\nexec cat >/dev/null\n"))
      (set-file-modes script #o755)
      (let* ((lisp-read-file-executable script)
             (lisp-read-file-timeout 0.5)
             (started (float-time))
             (err (should-error (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
                                :type 'error)))
        (should (string-match-p "\\`lisp-read-file: No answer to initialize within 0.5 seconds"
                                (error-message-string err)))
        (should (< (- (float-time) started) 5))
        (should-not (cl-some (lambda (process)
                               (and (equal (car (process-command process)) script)
                                    (process-live-p process)))
                             (process-list)))))))

(ert-deftest lrf-test-partial-lines ()
  "The filter joins a message split across reads and skips what is not a reply."
  (lrf-test-with-project
    (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
    (let* ((conn (lrf-test-connection))
           (process (lisp-read-file--conn-process conn))
           (replies (lisp-read-file--conn-replies conn)))
      (puthash 9001 'pending replies)
      (puthash 9002 'pending replies)
      (lisp-read-file--filter process "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n{\"jsonrpc\":")
      (should (eq (gethash 9001 replies) 'pending))
      (lisp-read-file--filter process "\"2.0\",\"id\":9001,\"res")
      (should (eq (gethash 9001 replies) 'pending))
      (lisp-read-file--filter process "ult\":{\"ok\":\"é\"}}\nnot json\n{\"jsonrpc\":\"2.0\",\"id\":9002,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":9003,\"result\":{}}\n")
      (should (equal (alist-get 'result (gethash 9001 replies)) '((ok . "é"))))
      (should (equal (gethash 9002 replies) '((jsonrpc . "2.0") (id . 9002) (result))))
      ;; A reply nobody waits for is dropped.
      (should-not (gethash 9003 replies))
      (should (null (lisp-read-file--conn-chunks conn)))
      (with-current-buffer (lisp-read-file--conn-stderr-buffer conn)
        (should (string-match-p "Not JSON: not json" (buffer-string))))
      ;; The connection still works.
      (with-current-buffer (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
        (should (equal (lrf-test-button-lines) lrf-test-demo-lines))))))

(ert-deftest lrf-test-server-requests ()
  "Server requests get answers: ping {}, roots/list the root, others an error."
  (lrf-test-with-project
    (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
    (let* ((conn (lrf-test-connection))
           (process (lisp-read-file--conn-process conn))
           (sent nil))
      (cl-letf (((symbol-function 'process-send-string)
                 (lambda (_process string) (push string sent))))
        (lisp-read-file--filter
         process
         (concat "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\",\"params\":{}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"sampling/createMessage\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n")))
      (setq sent (mapcar (lambda (line)
                           (should (string-suffix-p "\n" line))
                           (lisp-read-file--json-read line))
                         (nreverse sent)))
      (should (= (length sent) 3))
      (should (equal (nth 0 sent) '((jsonrpc . "2.0") (id . "a") (result))))
      (should (equal (nth 1 sent)
                     `((jsonrpc . "2.0") (id . 7)
                       (result (roots ((uri . ,(concat "file://" (directory-file-name
                                                                  lrf-test-project)))
                                       (name . ,(file-name-nondirectory
                                                 (directory-file-name lrf-test-project)))))))))
      (should (equal (alist-get 'id (nth 2 sent)) 8))
      (should (equal (alist-get 'code (alist-get 'error (nth 2 sent))) -32601))
      ;; The real process got none of these and still answers.
      (with-current-buffer (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
        (should (equal (lrf-test-button-lines) lrf-test-demo-lines))))))

;;;; Commands

(ert-deftest lrf-test-outline ()
  "The outline buffer shows the collapsed view; each line jumps to its form."
  (lrf-test-with-project
    (let* ((file (lrf-test-file "src/demo.lisp"))
           (source (find-file-noselect file)))
      (with-current-buffer source
        (goto-char (point-min))
        (forward-line 32)                 ; Line 33, inside with-shape.
        (let ((outline (lisp-read-file-outline)))
          (should (eq (current-buffer) outline))
          (should (equal (buffer-name outline) "*lisp-read-file outline: src/demo.lisp*"))
          (should (eq major-mode 'lisp-read-file-outline-mode))
          (should buffer-read-only)
          (should (equal (buffer-substring-no-properties (point-min) (point-max))
                         (concat
                          " 2: (defpackage #:demo ...)\n"
                          " 6: (in-package #:demo)\n"
                          " 8: (defvar *count* 0 ...) ;; How many shapes exist.\n"
                          "11: (defclass shape () (name size) ...) ;; A thing with a size.\n"
                          "16: (defgeneric area (shape) ...) ;; Area of SHAPE.\n"
                          "19: (defmethod area ((s shape)) ...)\n"
                          "22: (defmethod area :around ((s shape)) ...)\n"
                          "25: #+sbcl (defun fast-path (x) ...) ;; Use SBCL internals.\n"
                          "30: (eval-when (:compile-toplevel :load-toplevel :execute)\n"
                          "31:   (defmacro with-shape ((var shape) &body body) ...))\n")))
          ;; Point starts on the form around point in the source.
          (should (looking-at "31:   (defmacro with-shape"))
          (should (string-match-p "src/demo.lisp +lisp-collapsed +9 forms"
                                  (lisp-read-file--header-line)))
          (should (equal (lrf-test-button-lines) lrf-test-demo-lines))
          (should (equal (lrf-test-check-buttons outline file) lrf-test-demo-lines))
          ;; Keys of the outline buffer.
          (with-current-buffer outline
            (should (eq (key-binding "g") 'revert-buffer))
            (should (eq (key-binding "q") 'quit-window))
            (goto-char (point-min))
            (call-interactively (key-binding "n"))
            (should (looking-at " 6: "))
            (call-interactively (key-binding "n"))
            (should (looking-at " 8: "))
            (call-interactively (key-binding "p"))
            (should (looking-at " 6: "))
            (call-interactively (key-binding "p"))
            (should (looking-at " 2: "))
            (call-interactively (key-binding "n"))
            (call-interactively (key-binding "n"))
            (call-interactively (key-binding "p"))
            (should (looking-at " 6: "))
            (should (eq (get-char-property (1+ (point)) 'face) 'lisp-read-file-line-number))))))))

(ert-deftest lrf-test-outline-long-file ()
  "An outline longer than the tool's default page is shown whole, without a
footer telling to pass an offset, which an Emacs user cannot do."
  (lrf-test-with-project
    (let ((file (lrf-test-file "src/many.lisp")))
      (with-temp-file file
        (dotimes (i 2500)
          (insert (format "(defun f%d (x) x)\n" i))))
      (with-current-buffer (find-file-noselect file)
        (goto-char (point-max))
        (forward-line -1)
        (with-current-buffer (lisp-read-file-outline)
          ;; Rendering makes many small objects: with Emacs' default threshold it
          ;; collected garbage 8 times, each a pass over the whole heap (1.3 s of
          ;; 1.5 s); a count, not a time, so that the test does not depend on the machine.
          (let ((gc-cons-threshold 800000)
                (before gcs-done))
            (revert-buffer)
            (should (<= (- gcs-done before) 1))
            (should (= gc-cons-threshold 800000)))
          (should (equal (length (lrf-test-buttons)) 2500))
          (should (looking-at "2500: (defun f2499 (x) x)$"))
          (should-not (string-match-p "offset" (buffer-string)))
          (should-not (string-match-p "cut" (lisp-read-file--header-line))))
        (with-current-buffer (lisp-read-file-expand "^f2400$")
          (should (looking-at "2401: (defun f2400 (x) x)$"))
          (should-not (string-match-p "offset" (buffer-string))))
        ;; A one-line match before a longer one: point on the first.
        (with-temp-file file
          (insert "(defun g1 (x) x)\n(defun g2 (x)\n  x)\n"))
        (with-current-buffer (lisp-read-file-expand "^g[12]$")
          (should (looking-at "1: (defun g1 (x) x)$")))))))

(ert-deftest lrf-test-outline-over-cap ()
  "A file over the size cap: the outline says how to raise the cap from Emacs,
and following that shows the outline."
  (lrf-test-with-project
    (let ((lisp-read-file-arguments '("--max-file-bytes" "100")))
      (with-current-buffer (find-file-noselect (lrf-test-file "src/demo.lisp"))
        (with-current-buffer (lisp-read-file-outline)
          (should (null (lrf-test-buttons)))
          (should (string-match-p
                   (regexp-quote "[In Emacs: (setq lisp-read-file-arguments \
'(\"--max-file-bytes\" \"1048576\")), then M-x lisp-read-file-shutdown and g here.]")
                   (buffer-string)))
          (setq lisp-read-file-arguments '("--max-file-bytes" "1048576"))
          (lisp-read-file-shutdown)
          (revert-buffer)
          (should (equal (lrf-test-button-lines) lrf-test-demo-lines))
          (should-not (string-match-p "In Emacs" (buffer-string))))))))

(ert-deftest lrf-test-outline-refresh ()
  "`g' in the outline buffer reads the file again."
  (lrf-test-with-project
    (let* ((file (lrf-test-file "src/demo.lisp"))
           (outline (lisp-read-file-outline file)))
      (with-temp-buffer
        (insert "\n(defun added-later (y)\n  (1+ y))\n")
        (append-to-file (point-min) (point-max) file))
      (with-current-buffer outline
        (should-not (string-match-p "added-later" (buffer-string)))
        (goto-char (point-min))
        (forward-line 2)
        (call-interactively (key-binding "g"))
        (should (string-match-p "^37: (defun added-later (y) \\.\\.\\.)$" (buffer-string)))
        (should (equal (lrf-test-button-lines) (append lrf-test-demo-lines '(37))))
        (should (= (line-number-at-pos) 3))
        (should (equal (lrf-test-check-buttons outline file)
                       (append lrf-test-demo-lines '(37))))))))

(ert-deftest lrf-test-outline-modified-buffer ()
  "An outline of a modified buffer says that it shows the saved file."
  (lrf-test-with-project
    (let ((messages nil))
      (with-current-buffer (find-file-noselect (lrf-test-file "src/demo.lisp"))
        (goto-char (point-min))
        (insert "(defvar *new* 1)\n")
        (cl-letf (((symbol-function 'message)
                   (lambda (format-string &rest args)
                     (push (apply #'format-message format-string args) messages))))
          (lisp-read-file-outline))
        (should (cl-some (lambda (m) (string-match-p "unsaved changes" m)) messages))
        (should (string-match-p "buffer modified"
                                (with-current-buffer "*lisp-read-file outline: src/demo.lisp*"
                                  (lisp-read-file--header-line))))
        ;; The view is of the file on disk.
        (with-current-buffer "*lisp-read-file outline: src/demo.lisp*"
          (should-not (string-match-p "\\*new\\*" (buffer-string)))
          (should (equal (lrf-test-button-lines) lrf-test-demo-lines)))))))

(ert-deftest lrf-test-call ()
  "`lisp-read-file-call' passes every kind of tool argument and returns the result."
  (lrf-test-with-project
    (let* ((file (lrf-test-file "src/demo.lisp"))
           (raw (lisp-read-file-call file '((collapsed . :false) (offset . 1)
                                            (limit . 2) (line_numbers . t))))
           (headers (lisp-read-file-call file '((comments . "headers") (limit . 3)))))
      (should (equal (alist-get 'mode raw) "raw"))
      (should (equal (alist-get 'path raw) "src/demo.lisp"))
      (should (equal (alist-get 'file raw) file))
      (should (equal (alist-get 'root raw) lrf-test-project))
      (should (equal (alist-get 'content raw)
                     (concat " 2: (defpackage #:demo\n"
                             " 3:   (:use #:cl)\n"
                             "[Showing lines 2-3 of 35. Use offset=3 to read more.]\n")))
      (let ((meta (alist-get 'meta raw)))
        (should (eq (alist-get 'truncated meta) t))
        (should (equal (alist-get 'next_offset meta) 3))
        (should (equal (alist-get 'total_lines meta) 35))
        (should (equal (alist-get 'byte_length meta)
                       (file-attribute-size (file-attributes file)))))
      (should (equal (alist-get 'mode headers) "lisp-collapsed"))
      (should (string-prefix-p
               " 1: ;;;; demo.lisp -- shapes: the example of lisp-read-file's README\n"
               (alist-get 'content headers)))
      (should (equal (alist-get 'next_offset (alist-get 'meta headers)) 7)))))

(ert-deftest lrf-test-outline-no-file ()
  "A buffer without a file cannot be outlined."
  (with-temp-buffer
    (should-error (lisp-read-file-outline) :type 'user-error)))

(ert-deftest lrf-test-unicode-file ()
  "Non-ASCII file names and contents go through the JSON stream intact."
  (lrf-test-with-project
    (let ((file (lrf-test-file "src/größe.lisp")))
      (with-temp-file file
        (insert ";;; größe\n(defun größe (x)\n  \"Größe — λ.\"\n  (* x 2))\n"))
      (with-current-buffer (lisp-read-file-outline file)
        (should (equal (buffer-substring-no-properties (point-min) (point-max))
                       "2: (defun größe (x) ...) ;; Größe — λ.\n"))
        (should (equal (lrf-test-check-buttons (current-buffer) file) '(2)))))))

(ert-deftest lrf-test-expand-macro ()
  "Expanding with-shape shows it verbatim, every line a button."
  (lrf-test-with-project
    (let* ((file (lrf-test-file "src/demo.lisp"))
           (expand (lisp-read-file-expand "with-shape" file)))
      (with-current-buffer expand
        (should (equal (buffer-name) "*lisp-read-file expand: src/demo.lisp*"))
        (let ((text (buffer-substring-no-properties (point-min) (point-max))))
          (should (string-match-p
                   (regexp-quote
                    (concat "30: (eval-when (:compile-toplevel :load-toplevel :execute)\n"
                            "31:   (defmacro with-shape ((var shape) &body body)\n"
                            "32:     ;; Count every shape made through the macro.\n"
                            "33:     `(let ((,var ,shape))\n"
                            "34:        (incf *count*)\n"
                            "35:        ,@body)))\n"))
                   text))
          (should (string-match-p "^19: (defmethod area ((s shape)) \\.\\.\\.)$" text)))
        ;; Point starts on the first expanded line.
        (should (looking-at "31:   (defmacro with-shape ((var shape) &body body)$"))
        (should (equal (lrf-test-button-lines)
                       '(2 6 8 11 16 19 22 25 30 31 32 33 34 35)))
        (should (string-match-p "/with-shape/ expanded 1"
                                (lisp-read-file--header-line))))
      (should (equal (lrf-test-check-buttons expand file)
                     '(2 6 8 11 16 19 22 25 30 31 32 33 34 35))))))

(ert-deftest lrf-test-expand-method ()
  "Methods expand by NAME QUALIFIERS (SPECIALIZERS)."
  (lrf-test-with-project
    (let ((file (lrf-test-file "src/demo.lisp")))
      (with-current-buffer (lisp-read-file-expand "area :around" file)
        (let ((text (buffer-string)))
          (should (string-match-p "^22: (defmethod area :around ((s shape))\n23:   (max 0 (call-next-method)))$" text))
          (should (string-match-p "^19: (defmethod area ((s shape)) \\.\\.\\.)$" text)))
        (should (looking-at "22: (defmethod area :around"))
        (should (equal (lrf-test-check-buttons (current-buffer) file)
                       '(2 6 8 11 16 19 22 23 25 30 31))))
      (with-current-buffer (lisp-read-file-expand "^area \\(shape\\)$" file)
        (let ((text (buffer-string)))
          (should (string-match-p "^19: (defmethod area ((s shape))\n20:   (\\* (size s) (size s)))$" text))
          (should (string-match-p "^22: (defmethod area :around ((s shape)) \\.\\.\\.)$" text)))))))

(ert-deftest lrf-test-expand-interactive ()
  "Interactively, the default pattern is the symbol at point, anchored."
  (lrf-test-with-project
    (with-current-buffer (find-file-noselect (lrf-test-file "src/demo.lisp"))
      (goto-char (point-min))
      (search-forward "#:with-shape")    ; In the :export of the defpackage.
      (backward-char 3)
      (let ((prompt nil))
        (cl-letf (((symbol-function 'read-string)
                   (lambda (string &optional _initial _history default &rest _)
                     (setq prompt string)
                     default)))
          (call-interactively #'lisp-read-file-expand))
        (should (equal prompt "Expand definitions matching (default ^with-shape$): "))
        (with-current-buffer "*lisp-read-file expand: src/demo.lisp*"
          (should (string-match-p "^35:        ,@body)))$" (buffer-string)))
          (should (equal lisp-read-file--arguments
                         '((name_pattern . "^with-shape$") (line_numbers . t) (limit . 20000))))))))
  (with-temp-buffer
    (lisp-mode)
    (insert "(foo demo::area *count* cl:list+ 42)")
    (dolist (case '(("demo::area" . "^area$")
                    ("*count*" . "^\\*count\\*$")
                    ("cl:list+" . "^list\\+$")
                    ("42" . nil)))
      (goto-char (point-min))
      (search-forward (car case))
      (backward-char 1)
      (should (equal (lisp-read-file--default-pattern) (cdr case))))))

(ert-deftest lrf-test-expand-text-file ()
  "A pattern on a text file greps it: lines as grep -n prints them, each a button."
  (lrf-test-with-project
    (let* ((file (lrf-test-file "notes.txt"))
           (expand (lisp-read-file-expand "todo" file)))
      (with-current-buffer expand
        (should (equal (alist-get 'mode lisp-read-file--result) "text-filtered"))
        (should (equal (buffer-substring-no-properties (point-min) (point-max))
                       "1-alpha\n2:beta TODO one\n3-gamma\n"))
        ;; Point starts on the matching line.
        (should (looking-at "2:beta TODO one$"))
        (should (equal (lrf-test-button-lines) '(1 2 3))))
      (should (equal (lrf-test-check-buttons expand file) '(1 2 3))))))

(ert-deftest lrf-test-expand-no-match ()
  "A pattern that matches nothing says so."
  (lrf-test-with-project
    (let ((messages nil))
      (cl-letf (((symbol-function 'message)
                 (lambda (format-string &rest args)
                   (push (apply #'format-message format-string args) messages))))
        (with-current-buffer (lisp-read-file-expand "^no-such-thing$"
                                                    (lrf-test-file "src/demo.lisp"))
          (should (string-match-p "^\\[No definition matched name_pattern \"\\^no-such-thing\\$\"\\.\\]$"
                                  (buffer-string)))
          (should (eq (get-char-property
                       (save-excursion (goto-char (point-min))
                                       (search-forward "[No definition")
                                       (point))
                       'face)
                      'lisp-read-file-note))))
      (should (member "No definition matched ^no-such-thing$" messages)))))

(ert-deftest lrf-test-tool-errors ()
  "Tool errors are surfaced as `user-error's with the code and the message."
  (lrf-test-with-project
    (let ((err (should-error (lisp-read-file-find-file-outline (lrf-test-file "missing.lisp"))
                             :type 'user-error)))
      (should (string-match-p "\\`NOT_FOUND: no such file: missing\\.lisp"
                              (error-message-string err))))
    (should-not (get-buffer "*lisp-read-file outline: missing.lisp*"))
    (let ((err (should-error (lisp-read-file-expand "\\w{5000}" (lrf-test-file "src/demo.lisp"))
                             :type 'user-error)))
      (should (string-match-p "\\`INVALID_ARGUMENT: " (error-message-string err))))
    ;; A directory is a project: its map.
    (make-directory (lrf-test-file "dir.lisp"))
    (with-current-buffer (lisp-read-file-outline (lrf-test-file "dir.lisp"))
      (should (equal (alist-get 'path lisp-read-file--project) "dir.lisp")))
    ;; A binary file is an error.
    (let ((coding-system-for-write 'binary))
      (write-region "(defun f ()\0)\n" nil (lrf-test-file "bin.lisp")))
    (should-error (lisp-read-file-outline (lrf-test-file "bin.lisp")) :type 'user-error)
    ;; The process survived them all.
    (with-current-buffer (lisp-read-file-outline (lrf-test-file "src/demo.lisp"))
      (should (equal (lrf-test-button-lines) lrf-test-demo-lines)))))

(ert-deftest lrf-test-find-file-outline ()
  "`lisp-read-file-find-file-outline' reads a project file and outlines it."
  (lrf-test-with-project
    (let ((file (lrf-test-file "src/demo.lisp"))
          (prompted-in nil))
      (with-current-buffer (find-file-noselect (lrf-test-file "notes.txt"))
        (cl-letf (((symbol-function 'read-file-name)
                   (lambda (_prompt &optional directory &rest _)
                     (setq prompted-in directory)
                     file)))
          (call-interactively #'lisp-read-file-find-file-outline)))
      ;; The prompt starts at the project root.
      (should (equal prompted-in lrf-test-project))
      (let ((outline (get-buffer "*lisp-read-file outline: src/demo.lisp*")))
        (should (eq (window-buffer (selected-window)) outline))
        (should (equal (with-current-buffer outline (lrf-test-button-lines))
                       lrf-test-demo-lines))
        (should (equal (lrf-test-check-buttons outline file) lrf-test-demo-lines))))
    ;; A text file: every line numbered, every line a button.
    (let ((outline (lisp-read-file-find-file-outline (lrf-test-file "notes.txt"))))
      (with-current-buffer outline
        (should (equal (buffer-substring-no-properties (point-min) (point-max))
                       "1: alpha\n2: beta TODO one\n3: gamma\n"))
        (should (equal (lrf-test-button-lines) '(1 2 3))))
      (should (equal (lrf-test-check-buttons outline (lrf-test-file "notes.txt"))
                     '(1 2 3))))))

;;;; Imenu and the minor mode

(defun lrf-test-line-position (line)
  "Return the position of the first non-blank character of LINE."
  (save-excursion
    (goto-char (point-min))
    (forward-line (1- line))
    (back-to-indentation)
    (point)))

(defun lrf-test-index-positions (index)
  "Return INDEX with markers replaced by positions."
  (mapcar (lambda (entry)
            (if (consp (cdr entry))
                (cons (car entry) (lrf-test-index-positions (cdr entry)))
              (cons (car entry) (if (markerp (cdr entry))
                                    (marker-position (cdr entry))
                                  (cdr entry)))))
          index))

(ert-deftest lrf-test-imenu ()
  "The imenu index lists the definitions by group, at their lines."
  (lrf-test-with-project
    (with-current-buffer (find-file-noselect (lrf-test-file "src/demo.lisp"))
      (lisp-mode)
      (should-not (local-variable-p 'imenu-create-index-function))
      (lisp-read-file-mode 1)
      (should (eq imenu-create-index-function #'lisp-read-file-imenu-create-index))
      (let ((index (funcall imenu-create-index-function)))
        (should (equal (lrf-test-index-positions index)
                       `(("Packages" ("#:demo" . ,(lrf-test-line-position 2)))
                         ("Variables" ("*count*" . ,(lrf-test-line-position 8)))
                         ("Types" ("shape" . ,(lrf-test-line-position 11)))
                         ("Functions" ("area" . ,(lrf-test-line-position 16))
                          ("fast-path" . ,(lrf-test-line-position 25)))
                         ("Methods" ("area (shape)" . ,(lrf-test-line-position 19))
                          ("area :around (shape)" . ,(lrf-test-line-position 22)))
                         ("Macros" ("with-shape" . ,(lrf-test-line-position 31)))))))
      ;; Through imenu itself.
      (goto-char (point-max))
      (let* ((index (imenu--make-index-alist t))
             (item (assoc "with-shape" (cdr (assoc "Macros" index)))))
        (should item)
        (imenu item)
        (should (looking-at "(defmacro with-shape ")))
      ;; Typed at imenu's prompts (SPC completes a word in Emacs 28, and adds the space).
      (switch-to-buffer (current-buffer))
      (let ((last-nonmenu-event ?\r))
        (execute-kbd-macro (kbd "C-c C-o i Methods RET area SPC :around SPC (shape) RET"))
        (should (= (line-number-at-pos) 22))
        (goto-char (point-min))
        (execute-kbd-macro (kbd "C-c C-o i Methods RET area SPC (shape) RET"))
        (should (= (line-number-at-pos) 19)))
      ;; A flat index.
      (let ((lisp-read-file-imenu-groups nil))
        (should (equal (mapcar #'car (lisp-read-file-imenu-create-index))
                       '("#:demo" "*count*" "shape" "area" "area (shape)"
                         "area :around (shape)" "fast-path" "with-shape"))))
      ;; Disabling the mode restores the previous function.
      (lisp-read-file-mode -1)
      (should-not (local-variable-p 'imenu-create-index-function))
      (setq-local imenu-create-index-function #'ignore)
      (lisp-read-file-mode 1)
      (should (eq imenu-create-index-function #'lisp-read-file-imenu-create-index))
      (lisp-read-file-mode -1)
      (should (local-variable-p 'imenu-create-index-function))
      (should (eq imenu-create-index-function #'ignore)))))

(ert-deftest lrf-test-imenu-distinct-names ()
  "Names shared in a group get their conditionals, then their lines; spaces stay."
  (lrf-test-with-project
    (let ((file (lrf-test-file "src/twice.lisp")))
      (with-temp-file file
        (insert "(defun twice () 1)\n#+sbcl (defun twice () 2)\n#+sbcl (defun twice () 3)\n"
                "#-ccl (progn\n  #+sbcl (defun nested () 1))\n(defun nested () 2)\n"
                "(defmacro twice () 4)\n"))
      (with-current-buffer (find-file-noselect file)
        (lisp-mode)
        (should (equal imenu-space-replacement "."))
        (lisp-read-file-mode 1)
        (should (null imenu-space-replacement))
        (should (equal (lrf-test-index-positions (funcall imenu-create-index-function))
                       `(("Functions"
                          ("twice" . ,(lrf-test-line-position 1))
                          ("twice #+sbcl [line 2]" . ,(lrf-test-line-position 2))
                          ("twice #+sbcl [line 3]" . ,(lrf-test-line-position 3))
                          ("nested #-ccl #+sbcl" . ,(lrf-test-line-position 5))
                          ("nested" . ,(lrf-test-line-position 6)))
                         ;; Another group: its own names.
                         ("Macros" ("twice" . ,(lrf-test-line-position 7))))))
        (let ((lisp-read-file-imenu-groups nil))
          (should (equal (mapcar #'car (lisp-read-file-imenu-create-index))
                         '("twice [line 1]" "twice #+sbcl [line 2]" "twice #+sbcl [line 3]"
                           "nested #-ccl #+sbcl" "nested" "twice [line 7]"))))
        (lisp-read-file-mode -1)
        (should-not (local-variable-p 'imenu-space-replacement))
        (setq-local imenu-space-replacement "_")
        (lisp-read-file-mode 1)
        (should (null imenu-space-replacement))
        (lisp-read-file-mode -1)
        (should (equal imenu-space-replacement "_"))))))

(ert-deftest lrf-test-imenu-pages ()
  "The imenu index follows the pages of a long outline."
  (lrf-test-with-project
    (let ((file (lrf-test-file "src/many.lisp")))
      (with-temp-file file
        (dotimes (i 2500)
          (insert (format "(defun f%d (x) x)\n" i))))
      (with-current-buffer (find-file-noselect file)
        (lisp-read-file-mode 1)
        (let ((functions (cdr (assoc "Functions" (funcall imenu-create-index-function)))))
          (should (= (length functions) 2500))
          (should (equal (car (nth 2499 functions)) "f2499"))
          (should (= (marker-position (cdr (nth 2499 functions)))
                     (lrf-test-line-position 2500))))))))

;;;; Real files of Debian's Common Lisp sources

(defconst lrf-test-debian-source "/usr/share/common-lisp/source/"
  "Where Debian installs the sources of its Common Lisp libraries.")

(defun lrf-test-in-ci ()
  "Return non-nil when CI is set to anything but empty, 0 or false."
  (let ((ci (getenv "CI")))
    (and ci (not (member ci '("" "0" "false"))))))

(defun lrf-test-require-directory (directory how)
  "Skip the running test when DIRECTORY is missing; HOW says how to install it.
Under CI a missing directory is a failure, not a skip."
  (unless (file-directory-p directory)
    (let ((message (format "%s is missing: %s (or run bash .ci/run)" directory how)))
      (if (lrf-test-in-ci)
          (error "%s; CI is set, so this is a failure, not a skip" message)
        (ert-skip message)))))

(defmacro lrf-test-with-cl-ppcre (&rest body)
  "Run BODY with `lrf-test-project' the read-only cl-ppcre sources of Debian.
The companion processes are stopped and the buffers visiting the
sources killed afterwards."
  (declare (indent 0) (debug t))
  `(let ((lrf-test-project (expand-file-name "cl-ppcre/" lrf-test-debian-source))
         (lisp-read-file-executable lrf-test-program)
         (lisp-read-file-arguments nil)
         (lisp-read-file-root-function #'lisp-read-file-default-root)
         (lisp-read-file-timeout 10))
     (lrf-test-require-directory lrf-test-project "apt-get install cl-ppcre")
     (clrhash lisp-read-file--names-cache)
     (unwind-protect
         (progn ,@body)
       (lisp-read-file-shutdown)
       (dolist (buffer (buffer-list))
         (let ((file (buffer-local-value 'buffer-file-name buffer)))
           (when (or (and file (string-prefix-p lrf-test-project (file-truename file)))
                     (string-prefix-p "*lisp-read-file" (buffer-name buffer))
                     (equal (buffer-name buffer) "*xref*"))
             (kill-buffer buffer)))))))

(defun lrf-test-imenu-choose (path)
  "Choose PATH, a list of names, through `imenu' as typed at its prompts.
Return the collections offered at each prompt, as lists of names.
`completing-read' answers the names of PATH in turn, each checked to
be among the names offered, as a user can only type those."
  (let ((offered nil)
        (answers path)
        ;; Called from the keyboard (a list would mean the mouse, and a menu).
        (last-nonmenu-event ?\r))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt collection &rest _)
                 (let ((names (mapcar #'car collection))
                       (answer (pop answers)))
                   (push names offered)
                   (should (member answer names))
                   answer))))
      (imenu (imenu-choose-buffer-index)))
    (should (null answers))
    (nreverse offered)))

(ert-deftest lrf-test-imenu-methods-cl-ppcre ()
  "On cl-ppcre's api.lisp imenu offers methods as NAME QUALIFIERS (SPECIALIZERS).
Two methods that differ only by a reader conditional (create-scanner
at lines 86 and 198) are two entries, each reached by its name; so
are two definitions of one name in a group (regex-apropos-aux)."
  (lrf-test-with-cl-ppcre
    (with-current-buffer (find-file-noselect (expand-file-name "api.lisp" lrf-test-project))
      (lisp-mode)
      (lisp-read-file-mode 1)
      (setq imenu--index-alist nil)
      (let* ((offered (lrf-test-imenu-choose '("Methods" "scan (string t)")))
             (methods (cadr offered)))
        (should (equal (car offered)
                       '("*Rescan*" "Variables" "Functions" "Methods" "Macros")))
        (should (= (line-number-at-pos) 224))
        ;; Every name of a group is offered once, as imenu shows it.
        (dolist (names offered)
          (should (equal names (delete-dups (copy-sequence names)))))
        (should (member "create-scanner (string)" methods))
        (should-not (cl-some (lambda (name) (string-match-p "\\." name)) methods))
        (dolist (case '(("create-scanner (t) #-:use-acl-regexp2-engine" . 86)
                        ("create-scanner (t) #+:use-acl-regexp2-engine" . 198)
                        ("scan (t t) #-:use-acl-regexp2-engine" . 246)
                        ("scan (t t) #+:use-acl-regexp2-engine" . 258)))
          (should (member (car case) methods))
          (lrf-test-imenu-choose (list "Methods" (car case)))
          (should (= (line-number-at-pos) (cdr case)))
          (should (looking-at "#[-+]:use-acl-regexp2-engine[ \n]+(defmethod "))))
      ;; A child inherits its container's conditional: build-replacement-template
      ;; at 803 is under #+:cormanlisp (let* ...), the generic function at 736 has none.
      (let ((functions (cadr (lrf-test-imenu-choose '("Functions" "regex-replace")))))
        (should (member "build-replacement-template" functions))
        (should (member "build-replacement-template #+:cormanlisp" functions))
        (lrf-test-imenu-choose '("Functions" "build-replacement-template #+:cormanlisp"))
        (should (= (line-number-at-pos) 803))
        (should (looking-at "(defun build-replacement-template ")))
      (let ((macros (cadr (lrf-test-imenu-choose '("Macros" "split")))))
        (should (member "regex-apropos-aux #-:cormanlisp" macros))
        (should (member "regex-apropos-aux #+:cormanlisp" macros))
        (lrf-test-imenu-choose '("Macros" "regex-apropos-aux #+:cormanlisp"))
        (should (= (line-number-at-pos) 1144)))
      (lisp-read-file-mode -1))))

(ert-deftest lrf-test-signature-parsing ()
  "Signatures of the collapsed view give operators, names and conditionals."
  (should (equal (lisp-read-file--parse-signature "(defun foo (x) ...)")
                 '("defun" "foo" nil)))
  (should (equal (lisp-read-file--parse-signature "#+(or sbcl ccl) (CL:DEFUN Foo ...)")
                 '("defun" "Foo" ("#+(or sbcl ccl)"))))
  (should (equal (lisp-read-file--parse-signature "#+sbcl #-(and) (defvar *x* ...)")
                 '("defvar" "*x*" ("#+sbcl" "#-(and)"))))
  (should (equal (lisp-read-file--parse-signature "(defun (setf foo) (v x) ...)")
                 '("defun" "(setf foo)" nil)))
  (should (equal (lisp-read-file--parse-signature "(defstruct (point (:conc-name p-)) x y ...)")
                 '("defstruct" "point" nil)))
  (should (equal (lisp-read-file--parse-signature
                  "(defmethod resize :before ((s shape) n &optional (k 1)) ...)")
                 '("defmethod" "resize :before (shape t)" nil)))
  (should (equal (lisp-read-file--parse-signature
                  "(defmethod foo ((x (eql :a)) (y integer)) ...)")
                 '("defmethod" "foo ((eql :a) integer)" nil)))
  (should (equal (lisp-read-file--parse-signature "(defmethod foo ...)")
                 '("defmethod" "foo" nil)))
  (should (equal (lisp-read-file--parse-signature "(in-package #:demo)")
                 '("in-package" "#:demo" nil)))
  (should (equal (lisp-read-file--parse-signature "#-ccl (progn")
                 '("progn" nil ("#-ccl"))))
  (should (null (lisp-read-file--parse-signature ";; a comment")))
  (should (null (lisp-read-file--parse-signature "#+sbcl"))))

(ert-deftest lrf-test-minor-mode-keys ()
  "The minor mode binds the commands under its prefix key."
  (with-temp-buffer
    (lisp-mode)
    (lisp-read-file-mode 1)
    (should (eq (key-binding (kbd "C-c C-o C-o")) #'lisp-read-file-outline))
    (should (eq (key-binding (kbd "C-c C-o o")) #'lisp-read-file-outline))
    (should (eq (key-binding (kbd "C-c C-o e")) #'lisp-read-file-expand))
    (should (eq (key-binding (kbd "C-c C-o C-e")) #'lisp-read-file-expand))
    (should (eq (key-binding (kbd "C-c C-o f")) #'lisp-read-file-find-file-outline))
    (should (eq (key-binding (kbd "C-c C-o i")) #'imenu))
    (should (eq (key-binding (kbd "C-c C-o p")) #'lisp-read-file-project-outline))
    (should (eq (key-binding (kbd "C-c C-o C-p")) #'lisp-read-file-project-outline))
    (should (memq #'lisp-read-file-xref-backend xref-backend-functions))
    (lisp-read-file-mode -1)
    (should-not (eq (key-binding (kbd "C-c C-o o")) #'lisp-read-file-outline))))

;;;; Cross references and the project outline (fixtures/project)

(defconst lrf-test-shapes-files
  '("shapes.asd" "src/package.lisp" "src/generics.lisp" "src/circle.lisp"
    "src/square.lisp")
  "The files of the fixture project fixtures/project.")

(defmacro lrf-test-with-shapes (&rest body)
  "Run BODY in a temporary copy of fixtures/project, a project with .git.
`lrf-test-project' is its directory."
  (declare (indent 0) (debug t))
  `(lrf-test-with-project
     (delete-file (lrf-test-file "src/demo.lisp"))
     (delete-file (lrf-test-file "notes.txt"))
     (dolist (name lrf-test-shapes-files)
       (copy-file (expand-file-name (concat "fixtures/project/" name) lrf-test-repository)
                  (lrf-test-file name) t))
     (clrhash lisp-read-file--names-cache)
     (when (get-buffer "*xref*")
       (kill-buffer "*xref*"))
     ,@body))

(defun lrf-test-tools ()
  "Return the names of the tools the server of the test project offers."
  (let ((conn (lisp-read-file--connection lrf-test-project)))
    (mapcar (lambda (tool) (alist-get 'name tool))
            (alist-get 'tools (lisp-read-file--request conn "tools/list"
                                                       (make-hash-table))))))

(defun lrf-test-require-find ()
  "Skip the running test when the server has no lisp-find tool."
  (unless (member "lisp-find" (lrf-test-tools))
    (ert-skip "the lisp-read-file program under test has no lisp-find tool")))

(defun lrf-test-require-project-map ()
  "Skip the running test when the server reads no directory (no project map)."
  (condition-case err
      (lisp-read-file--call-tool lrf-test-project "lisp-read-file" '((path . "src")))
    (user-error
     (when (string-prefix-p "IS_DIRECTORY" (cadr err))
       (ert-skip "the lisp-read-file program under test has no project map")))))

(defun lrf-test-visit (name line)
  "Visit NAME of the test project in `lisp-read-file-mode', at the start of LINE."
  (let ((buffer (find-file-noselect (lrf-test-file name))))
    (set-buffer buffer)
    (lisp-read-file-mode 1)
    (goto-char (point-min))
    (forward-line (1- line))
    buffer))

(defun lrf-test-xref-places (xrefs)
  "Return the places of XREFS as (FILE LINE), FILE relative to the project."
  (mapcar (lambda (xref)
            (let ((marker (xref-location-marker (xref-item-location xref))))
              (with-current-buffer (marker-buffer marker)
                (list (file-relative-name buffer-file-name lrf-test-project)
                      (line-number-at-pos (marker-position marker))))))
          xrefs))

(defun lrf-test-type (keys)
  "Type KEYS, a `kbd' string, in the selected window as the keyboard would."
  (let ((last-nonmenu-event ?\r))
    (execute-kbd-macro (kbd keys))))

(ert-deftest lrf-test-outline-buffer-keys ()
  "C-c C-o and its commands work in the outline buffers, on the file they show.
In a project outline, on the file of the section at point; imenu
there jumps to the lines of the outline buffer itself."
  (lrf-test-with-shapes
    (lrf-test-require-project-map)
    (with-current-buffer (lrf-test-visit "src/square.lisp" 12)
      (let ((outline (lisp-read-file-outline)))
        (with-current-buffer outline
          (dolist (case '(("C-c C-o o" . lisp-read-file-outline)
                          ("C-c C-o C-o" . lisp-read-file-outline)
                          ("C-c C-o e" . lisp-read-file-expand)
                          ("C-c C-o C-e" . lisp-read-file-expand)
                          ("C-c C-o f" . lisp-read-file-find-file-outline)
                          ("C-c C-o i" . imenu)
                          ("C-c C-o p" . lisp-read-file-project-outline)))
            (should (eq (key-binding (kbd (car case))) (cdr case))))
          ;; imenu: the forms of the file, at their lines in this buffer.
          (should (looking-at "11: (defmethod area :around"))
          (lrf-test-type "C-c C-o i Functions RET total-area RET")
          (should (eq (current-buffer) outline))
          (should (looking-at "15: (defun total-area (shapes) ...)"))
          (lrf-test-type "C-c C-o i Methods RET area SPC (square) RET")
          (should (looking-at " 8: (defmethod area ((s square)) ...)"))
          ;; The default name to expand on a line: its form's, not "8:" or the operator.
          (should (equal (lisp-read-file--default-pattern) "^area$"))
          (search-forward "defmethod")
          (should (equal (lisp-read-file--default-pattern) "^area$"))
          (search-forward "square")
          (should (equal (lisp-read-file--default-pattern) "^square$"))
          (forward-line -1)
          (should (looking-at " 5: (defclass square"))
          (should (equal (lisp-read-file--default-pattern) "^square$"))
          ;; M-. there: the line's name too.
          (should (equal (xref-backend-identifier-at-point (xref-find-backend)) "square"))
          ;; A form that defines nothing gives no default, rather than "^in-package$".
          (forward-line -1)
          (should (looking-at " 3: (in-package #:shapes)"))
          (should (null (lisp-read-file--default-pattern)))
          (forward-line 2)
          ;; Expanding from the outline: the outline's file, by default the name at point.
          (lrf-test-type "C-c C-o e ^total-area$ RET")
          (should (equal (buffer-name) "*lisp-read-file expand: src/square.lisp*"))
          (should (looking-at "15: (defun total-area (shapes)$"))
          ;; Back to the outline from the expansion, point on the same form.
          (lrf-test-type "C-c C-o o")
          (should (eq (current-buffer) outline))
          (should (looking-at "15: "))
          ;; The project outline from the outline, point on the same form.
          (lrf-test-type "C-c C-o p")
          (should (equal (alist-get 'path lisp-read-file--project) "."))
          (should (looking-at "15: (defun total-area"))
          (let ((project (current-buffer)))
            ;; imenu there: a submenu per file.
            (lrf-test-type "C-c C-o i src/circle.lisp RET Functions RET square-of RET")
            (should (eq (current-buffer) project))
            (should (looking-at " 8: (defun square-of (x) ...)"))
            ;; C-c C-o o on a line of circle.lisp: that file's outline, at that form.
            (lrf-test-type "C-c C-o o")
            (should (equal (buffer-name) "*lisp-read-file outline: src/circle.lisp*"))
            (should (looking-at " 8: (defun square-of"))
            (should (equal (lrf-test-button-lines) '(3 5 8 12)))))))))

(ert-deftest lrf-test-xref-identifier-at-point ()
  "The identifier at point is the symbol as written, without quote prefixes."
  (with-temp-buffer
    (lisp-mode)
    (insert "(mapcar #'shapes:area '(x) 12 :key `foo)")
    (dolist (case '(("shapes:area" . "shapes:area") ("x)" . "x") ("12" . nil)
                    (":key" . ":key") ("foo" . "foo") ("mapcar" . "mapcar")))
      (goto-char (point-min))
      (search-forward (car case))
      (backward-char 1)
      (should (equal (lisp-read-file--identifier-at-point) (cdr case))))))

(ert-deftest lrf-test-xref-fallback-order ()
  "A connected SLY-like backend comes first; ours is the fallback, or first if asked."
  (lrf-test-with-shapes
    (let* ((connected nil)
           (fake-sly (lambda () (and connected 'fake-sly))))
      (with-current-buffer (lrf-test-visit "src/square.lisp" 9)
        ;; Without the mode: the global backend (etags in emacs -Q), not ours.
        (lisp-read-file-mode -1)
        (should-not (lisp-read-file--xref-backend-p (xref-find-backend)))
        ;; SLY's function added before the mode is turned on, then after it.
        (dolist (sly-first '(t nil))
          (lisp-read-file-mode -1)
          (kill-local-variable 'xref-backend-functions)
          (if sly-first
              (progn (add-hook 'xref-backend-functions fake-sly nil t)
                     (lisp-read-file-mode 1))
            (lisp-read-file-mode 1)
            (add-hook 'xref-backend-functions fake-sly nil t))
          (should (memq #'lisp-read-file-xref-backend xref-backend-functions))
          (setq connected nil)
          (let ((backend (xref-find-backend)))
            (should (lisp-read-file--xref-backend-p backend))
            (should (equal (lisp-read-file--xref-backend-root backend) lrf-test-project)))
          (setq connected t)
          (should (eq (xref-find-backend) 'fake-sly)))
        ;; Ours first when asked, even with SLY connected.
        (let ((lisp-read-file-xref-first t))
          (lisp-read-file-mode -1)
          (lisp-read-file-mode 1)
          (should (lisp-read-file--xref-backend-p (xref-find-backend)))
          (remove-hook 'xref-backend-functions fake-sly t)
          (add-hook 'xref-backend-functions fake-sly nil t)
          (should (lisp-read-file--xref-backend-p (xref-find-backend))))
        ;; Turning the mode off removes ours.
        (lisp-read-file-mode -1)
        (should-not (memq #'lisp-read-file-xref-backend xref-backend-functions))
        (should (eq (xref-find-backend) 'fake-sly))))))

(ert-deftest lrf-test-xref-definition-other-file ()
  "M-. on a function defined in another file jumps to its definition there."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (let ((source (lrf-test-visit "src/square.lisp" 9)))
      (search-forward "square-of")
      (backward-char 3)
      (switch-to-buffer source)
      (let ((this-command 'xref-find-definitions))
        (call-interactively #'xref-find-definitions))
      (should (equal (file-relative-name buffer-file-name lrf-test-project)
                     "src/circle.lisp"))
      (should (= (line-number-at-pos) 8))
      (should (looking-at "(defun square-of (x)"))
      (should-not (get-buffer "*xref*"))
      ;; Back with M-, (xref-pop-marker-stack).
      (xref-pop-marker-stack)
      (should (eq (current-buffer) source))
      ;; A package prefix on one side only is ignored.
      (should (equal (lrf-test-xref-places
                      (xref-backend-definitions (xref-find-backend) "shapes::square-of"))
                     '(("src/circle.lisp" 8))))
      (should (null (xref-backend-definitions (xref-find-backend) "no-such-thing"))))))

(ert-deftest lrf-test-who-calls ()
  "Who calls lists each call, grouped by the calling definition, methods one by one."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/circle.lisp" 8)
      (let ((xrefs (lisp-read-file--who-calls-xrefs lrf-test-project "square-of")))
        ;; The two methods of area call it; the definition itself is no call.
        (should (equal (lrf-test-xref-places xrefs)
                       '(("src/circle.lisp" 13) ("src/square.lisp" 9))))
        (should (equal (mapcar (lambda (x) (xref-location-group (xref-item-location x)))
                               xrefs)
                       '("src/circle.lisp: 12 (defmethod area ((c circle)) ...)"
                         "src/square.lisp: 8 (defmethod area ((s square)) ...)")))
        (should (string-match-p "(square-of (radius c))" (xref-item-summary (car xrefs)))))
      ;; #'area in total-area is a call; the comment and docstring mentions are not.
      (should (equal (lrf-test-xref-places
                      (lisp-read-file--who-calls-xrefs lrf-test-project "area"))
                     '(("src/generics.lisp" 16) ("src/square.lisp" 16))))
      ;; The command shows them in an xref buffer.
      (search-forward "square-of")
      (lisp-read-file-who-calls "square-of")
      (with-current-buffer "*xref*"
        (let ((text (buffer-substring-no-properties (point-min) (point-max))))
          (should (string-match-p "src/circle.lisp: 12 (defmethod area ((c circle))" text))
          (should (string-match-p "src/square.lisp: 8 (defmethod area ((s square))" text)))))))

(ert-deftest lrf-test-callees ()
  "Callees lists the project's definitions a definition calls, and the names outside."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/square.lisp" 8)
      (let* ((found (lisp-read-file--callees-xrefs lrf-test-project "total-area"))
             (places (lrf-test-xref-places (car found))))
        ;; #'area: the generic function and each method; reduce and + are CL's own.
        (should (member '("src/generics.lisp" 5) places))
        (should (member '("src/circle.lisp" 12) places))
        (should (= (length places) 4))
        (should (null (cadr found))))
      (let ((found (lisp-read-file--callees-xrefs lrf-test-project "describe-shape")))
        (should (equal (sort (mapcar #'xref-item-summary (car found)) #'string<)
                       '("defgeneric area in src/generics.lisp"
                         "defmethod area in src/circle.lisp"
                         "defmethod area in src/square.lisp"
                         "defmethod area in src/square.lisp"))))
      (lisp-read-file-callees "total-area")
      (with-current-buffer "*xref*"
        (should (string-match-p "src/square.lisp: 15 (defun total-area (shapes) ...) calls"
                                (buffer-substring-no-properties (point-min) (point-max))))))))

(ert-deftest lrf-test-xref-definitions-derived ()
  "M-. on a slot's reader lands on the slot; the summary names the form that makes it."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/generics.lisp" 1)
      (let ((xrefs (xref-backend-definitions (xref-find-backend) "radius")))
        (should (equal (lrf-test-xref-places xrefs) '(("src/circle.lisp" 6))))
        (should (string-prefix-p "reader radius, made by (defclass circle"
                                 (xref-item-summary (car xrefs))))))))

(defconst lrf-test-point-lisp
  ";;;; point.lisp: a structure and a class whose names no form spells.

\(in-package #:shapes)

\(defstruct (point (:constructor make-pt (x y))
                  (:conc-name pt-))
  x
  (y 0))

\(defclass labelled ()
  ((label :initarg :label
          :accessor label-of)))

\(defun point-label (p l)
  (setf (label-of l) (pt-x p))
  (list (make-pt 1 2) (copy-point p) (pt-y p)))
"
  "The file src/point.lisp that the tests of derived definitions add.")

(defun lrf-test-jump (name)
  "Type M-. with point on the first NAME after point; return (FILE LINE).
FILE is relative to the project; point is left where M-. went."
  (search-forward name)
  (backward-char 1)
  (switch-to-buffer (current-buffer))
  (let ((this-command 'xref-find-definitions))
    (call-interactively #'xref-find-definitions))
  (list (file-relative-name buffer-file-name lrf-test-project) (line-number-at-pos)))

(ert-deftest lrf-test-xref-derived-and-packages ()
  "M-. on a constructor, struct or slot accessor lands on the option or slot that
makes it; who-calls and callees see them; xref groups name the package."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-temp-file (lrf-test-file "src/point.lisp")
      (insert lrf-test-point-lisp))
    (with-current-buffer (lrf-test-visit "src/point.lisp" 14)
      (should (equal (lrf-test-jump "make-pt") '("src/point.lisp" 5)))
      (should (looking-at "(:constructor make-pt (x y))"))
      (with-current-buffer (lrf-test-visit "src/point.lisp" 15)
        (should (equal (lrf-test-jump "(pt-x") '("src/point.lisp" 7)))
        (should (looking-at "x$")))
      (with-current-buffer (lrf-test-visit "src/point.lisp" 15)
        (should (equal (lrf-test-jump "label-of") '("src/point.lisp" 11)))
        (should (looking-at "(label :initarg")))
      (with-current-buffer (lrf-test-visit "src/point.lisp" 16)
        (should (equal (lrf-test-jump "copy-point") '("src/point.lisp" 5))))
      (let ((xrefs (xref-backend-definitions (xref-find-backend) "pt-y")))
        (should (equal (xref-item-summary (car xrefs))
                       "accessor pt-y, made by (defstruct (point (:constructor make-pt (x y)) \
\(:conc-name pt-)) x y)"))
        (should (equal (xref-location-group (xref-item-location (car xrefs)))
                       (concat "[package shapes] " (lrf-test-file "src/point.lisp")))))
      ;; Several definitions: the *xref* buffer groups them by package and file.
      (xref-find-definitions "area")
      (with-current-buffer "*xref*"
        (should (string-match-p
                 (concat "^" (regexp-quote (concat "[package shapes] "
                                                   (lrf-test-file "src/generics.lisp")))
                         "\n *5: (defgeneric area (shape)")
                 (buffer-substring-no-properties (point-min) (point-max)))))
      ;; The uses: their groups name the package too.
      (let ((xrefs (xref-backend-references (xref-find-backend) "pt-x")))
        (should (equal (lrf-test-xref-places xrefs) '(("src/point.lisp" 15))))
        (should (string-prefix-p "[package shapes] src/point.lisp: 14 (defun point-label (p l)"
                                 (xref-location-group (xref-item-location (car xrefs))))))
      ;; A package that uses one defined outside the project: its symbols may be
      ;; that one's, marked ?.
      (with-temp-file (lrf-test-file "src/other.lisp")
        (insert "(defpackage #:other (:use #:cl #:elsewhere))\n(in-package #:other)\n"
                "(defun helper () t)\n"))
      (should (equal (mapcar (lambda (x) (xref-location-group (xref-item-location x)))
                             (xref-backend-definitions (xref-find-backend) "helper"))
                     (list (concat "[package other?] " (lrf-test-file "src/other.lisp")))))
      ;; Callers of an accessor, and the derived definitions a function calls.
      (should (equal (lrf-test-xref-places
                      (lisp-read-file--who-calls-xrefs lrf-test-project "pt-x"))
                     '(("src/point.lisp" 15))))
      (let ((callees (car (lisp-read-file--callees-xrefs lrf-test-project "point-label"))))
        (should (equal (mapcar #'xref-item-summary callees)
                       '("setf-accessor (setf label-of) in src/point.lisp"
                         "accessor pt-x in src/point.lisp"
                         "constructor make-pt in src/point.lisp"
                         "copier copy-point in src/point.lisp"
                         "accessor pt-y in src/point.lisp")))
        (should (equal (lrf-test-xref-places callees)
                       '(("src/point.lisp" 11) ("src/point.lisp" 7) ("src/point.lisp" 5)
                         ("src/point.lisp" 5) ("src/point.lisp" 8))))))))

(ert-deftest lrf-test-definition-summary ()
  "The xref line of a definition: its signature; of a derived one, what makes it."
  (should (equal (lisp-read-file--definition-summary
                  '((kind . "defun") (name . "f") (signature . "(defun f (x) ...)")))
                 "(defun f (x) ...)"))
  (should (equal (lisp-read-file--definition-summary
                  '((kind . "accessor") (name . "pt-x") (signature . "(defstruct pt x)")
                    (form (line . 1) (kind . "defstruct") (name . "pt"))))
                 "accessor pt-x, made by (defstruct pt x)"))
  ;; A definition made by a macro of the project: lisp-find's `via' names the macro.
  (should (equal (lisp-read-file--definition-summary
                  '((kind . "defun") (name . "make-point") (signature . "(defthing point)")
                    (form (line . 3) (kind . "defthing") (name . "point"))
                    (via . "defthing")))
                 "defun make-point, via defthing: (defthing point)")))

(ert-deftest lrf-test-xref-cl-ppcre ()
  "M-., who-calls and callees on Debian's cl-ppcre, a project no Lisp has loaded."
  (lrf-test-with-cl-ppcre
    (with-current-buffer (find-file-noselect (expand-file-name "lexer.lisp" lrf-test-project))
      (lisp-mode)
      (lisp-read-file-mode 1)
      (goto-char (point-min))
      (forward-line 70)                   ; (make-lexer-internal :str ...
      ;; The structure's constructor: the :constructor option of (defstruct (lexer ...)).
      (should (equal (lrf-test-jump "make-lexer-internal") '("lexer.lisp" 60)))
      (should (looking-at "(:constructor make-lexer-internal)"))
      (xref-pop-marker-stack)
      ;; A structure accessor: its slot.
      (goto-char (point-min))
      (forward-line 78)
      (should (equal (lrf-test-jump "lexer-pos") '("lexer.lisp" 66)))
      (should (looking-at "(pos 0 :type fixnum)"))
      ;; A class slot's accessor, in another file.
      (let ((xrefs (xref-backend-definitions (xref-find-backend) "offset")))
        (should (equal (mapcar (lambda (x) (xref-location-line (xref-item-location x))) xrefs)
                       '(176)))
        (should (string-prefix-p "accessor offset, made by (defclass str (regex)"
                                 (xref-item-summary (car xrefs))))
        ;; (cl-ppcre uses :future-common-lisp under #+:genera, a package no file
        ;; defines, so its unexported symbols may be that package's: marked ?.)
        (should (string-match-p
                 (concat "\\`\\[package cl-ppcre\\??\\] "
                         (regexp-quote (expand-file-name "regex-class.lisp" lrf-test-project))
                         "\\'")
                 (xref-location-group (xref-item-location (car xrefs))))))
      (let ((xrefs (lisp-read-file--who-calls-xrefs lrf-test-project "create-scanner-aux")))
        (should (equal (mapcar (lambda (x) (xref-location-line (xref-item-location x))) xrefs)
                       '(158)))
        (should (string-prefix-p "api.lisp: 86 #-:use-acl-regexp2-engine (defmethod create-scanner"
                                 (xref-location-group (xref-item-location (car xrefs))))))
      (let ((callees (car (lisp-read-file--callees-xrefs lrf-test-project "make-lexer"))))
        ;; Each callee at its definition, its file said (the group is make-lexer's).
        (dolist (case '(("constructor make-lexer-internal in lexer.lisp" . 60)
                        ("defmacro maybe-coerce-to-simple-string in util.lisp" . 136)))
          (let ((xref (cl-find (car case) callees :key #'xref-item-summary :test #'equal)))
            (should xref)
            (should (= (xref-location-line (xref-item-location xref)) (cdr case)))))))))

(ert-deftest lrf-test-default-root ()
  "The root: a VC root or .git, else the nearest directory holding an .asd file.
Debian installs libraries without .git: a file in a system's
sub-directory, cl-ppcre/test/tests.lisp, has the system's directory
as its root, so M-. there finds the library's definitions."
  (let ((top (file-name-as-directory (file-truename (make-temp-file "lrf-root-" t)))))
    (unwind-protect
        (cl-flet ((touch (name)
                    (let ((file (expand-file-name name top)))
                      (make-directory (file-name-directory file) t)
                      (write-region "" nil file)
                      file)))
          (let ((deep (touch "sys/src/deep/b.lisp"))
                (bare (touch "bare/c.lisp")))
            (touch "sys/sys.asd")
            (touch "sys/src/a.lisp")
            (should (equal (lisp-read-file-default-root deep)
                           (expand-file-name "sys/" top)))
            (should (equal (lisp-read-file-default-root bare)
                           (expand-file-name "bare/" top)))
            ;; .git above the .asd wins: the repository is the project.
            (make-directory (expand-file-name ".git" top))
            (should (equal (file-name-as-directory (lisp-read-file-default-root deep)) top))))
      (delete-directory top t)))
  (lrf-test-with-cl-ppcre
    (let ((tests (expand-file-name "test/tests.lisp" lrf-test-project)))
      (should (equal (lisp-read-file-default-root tests) lrf-test-project))
      (with-current-buffer (find-file-noselect tests)
        (lisp-mode)
        (lisp-read-file-mode 1)
        (should (equal (lrf-test-xref-places
                        (xref-backend-definitions (xref-find-backend) "scan-to-strings"))
                       '(("api.lisp" 294) ("api.lisp" 319))))))))

(ert-deftest lrf-test-xref-definitions-several ()
  "M-. on a generic function lists it and its methods, with signatures."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/generics.lisp" 16)
      (let ((xrefs (xref-backend-definitions (xref-find-backend) "area")))
        (should (equal (sort (lrf-test-xref-places xrefs)
                             (lambda (a b) (string< (format "%s" a) (format "%s" b))))
                       '(("src/circle.lisp" 12) ("src/generics.lisp" 5)
                         ("src/square.lisp" 11) ("src/square.lisp" 8))))
        (should (cl-some (lambda (xref)
                           (string-prefix-p "(defmethod area :around ((s square))"
                                            (xref-item-summary xref)))
                         xrefs)))
      (search-forward "(area")
      (let ((this-command 'xref-find-definitions))
        (call-interactively #'xref-find-definitions))
      ;; Several: the *xref* buffer lists them, grouped by file.
      (with-current-buffer "*xref*"
        (let ((text (buffer-substring-no-properties (point-min) (point-max))))
          (should (string-match-p "src/generics.lisp" text))
          (should (string-match-p "^ *5: (defgeneric area (shape)" text))
          (should (string-match-p "^ *12: (defmethod area ((c circle))" text))
          (should (string-match-p "^ *11: (defmethod area :around ((s square))" text))
          ;; RET on an item visits its place.
          (goto-char (point-min))
          (re-search-forward "^ *12: ")
          (xref-goto-xref)))
      (with-current-buffer (window-buffer (selected-window))
        (should (equal (file-relative-name buffer-file-name lrf-test-project)
                       "src/circle.lisp"))
        (should (= (line-number-at-pos) 12))))))

(ert-deftest lrf-test-xref-references ()
  "M-? lists the uses as tokens, grouped by form, never in strings or comments."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/generics.lisp" 5)
      (let* ((xrefs (xref-backend-references (xref-find-backend) "area"))
             (places (lrf-test-xref-places xrefs)))
        ;; The uses in code, in every file.
        (dolist (place '(("src/generics.lisp" 5) ("src/generics.lisp" 16)
                         ("src/circle.lisp" 12) ("src/square.lisp" 8)
                         ("src/square.lisp" 11) ("src/square.lisp" 16)))
          (should (member place places)))
        ;; Never in a docstring, string, comment or block comment.
        (dolist (place '(("src/generics.lisp" 6) ("src/generics.lisp" 8)
                         ("src/generics.lisp" 11) ("src/generics.lisp" 15)
                         ("src/square.lisp" 12)))
          (should-not (member place places)))
        ;; Each use is a match at the symbol, with its line as summary.
        (dolist (xref xrefs)
          (let ((marker (xref-location-marker (xref-item-location xref))))
            (with-current-buffer (marker-buffer marker)
              (goto-char marker)
              (should (equal (list (xref-item-summary xref)
                                   (looking-at-p "\\(?:#:\\)?area\\_>"))
                             (list (xref-item-summary xref) t)))
              (should (string-match-p "area" (xref-item-summary xref)))
              (should (string-match-p
                       (regexp-quote (string-trim (xref-item-summary xref)))
                       (buffer-substring-no-properties (line-beginning-position)
                                                       (line-end-position)))))))
        ;; Grouped by the form around them: FILE: LINE (signature).
        (let ((use (cl-find '("src/generics.lisp" 16) xrefs
                            :key (lambda (x) (car (lrf-test-xref-places (list x))))
                            :test #'equal)))
          (should (string-prefix-p
                   "[package shapes] src/generics.lisp: 14 (defun describe-shape (shape)"
                   (xref-location-group (xref-item-location use))))))
      ;; M-? itself shows them in the *xref* buffer, by group.
      (xref-find-references "area")
      (with-current-buffer "*xref*"
        (let ((text (buffer-substring-no-properties (point-min) (point-max))))
          (should (string-match-p
                   "^\\[package shapes\\] src/square.lisp: 15 (defun total-area (shapes)" text))
          (should (string-match-p "^ *16: +(reduce #'\\+ shapes :key #'area))" text))
          (should-not (string-match-p "no use" text))))
      ;; A modified buffer is noted.
      (with-current-buffer (lrf-test-visit "src/circle.lisp" 1)
        (insert ";; new\n")
        (let ((messages nil))
          (cl-letf (((symbol-function 'message)
                     (lambda (format &rest args)
                       (push (apply #'format-message format args) messages))))
            (xref-backend-references (xref-find-backend) "area"))
          (should (cl-some (lambda (m) (string-match-p "circle.lisp has unsaved changes" m))
                           messages)))
        (set-buffer-modified-p nil)))))

(ert-deftest lrf-test-xref-replace ()
  "The uses M-? lists are matches: r in *xref* replaces the symbol, only there."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/generics.lisp" 1)
      (xref-find-references "area")
      (with-current-buffer "*xref*"
        ;; y to each of the 7 uses.
        (setq unread-command-events (listify-key-sequence "yyyyyyy"))
        (xref-query-replace-in-results "area" "surface"))
      (should (null unread-command-events))
      (let ((lines nil))
        (dolist (name (cdr lrf-test-shapes-files))
          (with-current-buffer (find-file-noselect (lrf-test-file name))
            (goto-char (point-min))
            (while (re-search-forward "surface\\|area" nil t)
              (push (format "%s:%d:%s" name (line-number-at-pos) (match-string 0))
                    lines))
            (set-buffer-modified-p nil)))
        (should (equal (sort lines #'string<)
                       '("src/circle.lisp:12:surface"
                         "src/generics.lisp:11:area" "src/generics.lisp:15:area"
                         "src/generics.lisp:16:area" "src/generics.lisp:16:surface"
                         "src/generics.lisp:5:surface" "src/generics.lisp:6:area"
                         "src/generics.lisp:6:area" "src/generics.lisp:8:area"
                         "src/generics.lisp:8:area" "src/package.lisp:5:surface"
                         "src/square.lisp:11:surface" "src/square.lisp:12:area"
                         "src/square.lisp:15:area" "src/square.lisp:16:surface"
                         "src/square.lisp:8:surface")))))))

(ert-deftest lrf-test-xref-apropos-and-completion ()
  "Apropos by name pattern; the prompt completes from the project's definitions."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/package.lisp" 1)
      (let ((backend (xref-find-backend)))
        ;; Methods match by their specializers too: area (square).
        (should (equal (sort (lrf-test-xref-places (xref-backend-apropos backend "square"))
                             (lambda (a b) (string< (format "%s" a) (format "%s" b))))
                       '(("src/circle.lisp" 8) ("src/square.lisp" 11)
                         ("src/square.lisp" 5) ("src/square.lisp" 8))))
        (should (equal (lrf-test-xref-places (xref-backend-apropos backend "^square"))
                       '(("src/circle.lisp" 8) ("src/square.lisp" 5))))
        ;; Several words: all of them, in any order.
        (should (equal (lrf-test-xref-places (xref-backend-apropos backend "area total"))
                       '(("src/square.lisp" 15))))
        (should (equal (lrf-test-xref-places (xref-backend-apropos backend "^describe-"))
                       '(("src/generics.lisp" 14))))
        (let ((table (xref-backend-identifier-completion-table backend)))
          (should (equal (try-completion "descr" table) "describe-shape"))
          (should (member "square-of" (all-completions "squ" table)))
          ;; Names of symbols: a method gives its function's name.
          (should (equal (all-completions "are" table) '("area")))
          (should (test-completion "total-area" table))))
      (xref-find-apropos "square")
      (with-current-buffer "*xref*"
        (should (string-match-p "(defclass square ()"
                                (buffer-substring-no-properties (point-min) (point-max))))))))

(ert-deftest lrf-test-xref-completion-large ()
  "The names offered at the M-. prompt are asked by what is typed, so that a
project of more definitions than a few pages of lisp-find completes them all."
  (lrf-test-with-project
    (lrf-test-require-find)
    (dotimes (part 3)
      (with-temp-file (lrf-test-file (format "src/part%d.lisp" part))
        (dotimes (i 4000)
          (insert (format "(defun f%d (x) x)\n" (+ (* part 4000) i))))))
    (with-temp-file (lrf-test-file "src/zz.lisp")
      (insert "(defun zzz-last () t)\n(defmacro zzz-macro () t)\n"))
    (clrhash lisp-read-file--names-cache)
    (with-current-buffer (lrf-test-visit "src/zz.lisp" 1)
      (let ((table (xref-backend-identifier-completion-table (xref-find-backend))))
        (should (equal (try-completion "zzz-l" table) "zzz-last"))
        (should (equal (all-completions "ZZZ" table) '("zzz-last" "zzz-macro")))
        (should (equal (all-completions "f1199" table)
                       '("f1199" "f11990" "f11991" "f11992" "f11993" "f11994" "f11995"
                         "f11996" "f11997" "f11998" "f11999")))
        (should (test-completion "f11999" table))
        (should-not (test-completion "f12000" table))))))

(ert-deftest lrf-test-xref-restart ()
  "Xref goes through the one process per root and restarts it when it died."
  (lrf-test-with-shapes
    (lrf-test-require-find)
    (with-current-buffer (lrf-test-visit "src/square.lisp" 9)
      (save-current-buffer (lisp-read-file-outline))
      (let ((process (lisp-read-file--conn-process (lrf-test-connection))))
        (should (xref-backend-definitions (xref-find-backend) "square-of"))
        (should (eq (lisp-read-file--conn-process (lrf-test-connection)) process))
        (should (= (hash-table-count lisp-read-file--connections) 1))
        (delete-process process)
        (should (equal (lrf-test-xref-places
                        (xref-backend-definitions (xref-find-backend) "square-of"))
                       '(("src/circle.lisp" 8))))
        (should-not (eq (lisp-read-file--conn-process (lrf-test-connection)) process))
        ;; A tool error is a user-error with the tool's code.
        (let ((err (should-error (lisp-read-file-find '((name . "area") (path . "missing")))
                                 :type 'user-error)))
          (should (string-match-p "\\`NOT_FOUND: " (error-message-string err))))))))

(defun lrf-test-check-project-buttons (outline)
  "Push every button of OUTLINE, a project outline buffer; check where it lands.
A header button visits line 1 of its file; a numbered line's button
visits that line of the file under the last header, whose text starts
with the line's first token.  Return the (FILE LINE) places visited."
  (let ((visited nil))
    (dolist (position (with-current-buffer outline (lrf-test-buttons)))
      (let* ((line (with-current-buffer outline
                     (get-text-property position 'lisp-read-file-line)))
             (text (with-current-buffer outline
                     (save-excursion
                       (goto-char position)
                       (buffer-substring-no-properties (point) (line-end-position)))))
             (header (with-current-buffer outline
                       (save-excursion
                         (goto-char position)
                         (end-of-line)
                         (and (re-search-backward
                               (concat "^" lisp-read-file--file-header-regexp) nil t)
                              (or (match-string-no-properties 1)
                                  (match-string-no-properties 3)))))))
        (pop-to-buffer outline)
        (goto-char position)
        (call-interactively (key-binding (kbd "RET")))
        (should (equal (file-relative-name buffer-file-name lrf-test-project) header))
        (should (= (line-number-at-pos) line))
        (if (with-current-buffer outline
              (get-text-property position 'lisp-read-file-header))
            (should (= line 1))
          (should (string-match " *[0-9]+: \\(.*\\)" text))
          (let ((shown (match-string 1 text)))
            (should (equal (lrf-test-first-token
                            (buffer-substring-no-properties (point) (line-end-position)))
                           (lrf-test-first-token shown)))))
        (push (list header line) visited)))
    (nreverse visited)))

(ert-deftest lrf-test-project-outline ()
  "The project outline's headers and lines are buttons to the right files and lines."
  (lrf-test-with-shapes
    (lrf-test-require-project-map)
    (with-current-buffer (lrf-test-visit "src/square.lisp" 12)
      (let* ((outline (lisp-read-file-project-outline))
             (text (with-current-buffer outline
                     (buffer-substring-no-properties (point-min) (point-max))))
             (visited nil))
        (should (string-match-p "^==> src/generics.lisp <==" text))
        ;; Point starts on the form around point in the source.
        (with-current-buffer outline
          (should (looking-at "11: (defmethod area :around"))
          (should (= (window-point (get-buffer-window outline)) (point))))
        (setq visited (lrf-test-check-project-buttons outline))
        (dolist (place '(("src/generics.lisp" 1) ("src/generics.lisp" 5)
                         ("src/generics.lisp" 14) ("src/circle.lisp" 8)
                         ("src/circle.lisp" 12) ("src/square.lisp" 11)
                         ("src/package.lisp" 3)))
          (should (member place visited)))
        ;; g asks again; n and p move between buttons.
        (with-current-buffer outline
          (goto-char (point-min))
          (revert-buffer)
          (should (equal (buffer-substring-no-properties (point-min) (point-max)) text))
          (lisp-read-file-next-line 2)
          (should (get-text-property (point) 'lisp-read-file-line))
          ;; M-. works in the outline buffer too.
          (when (member "lisp-find" (lrf-test-tools))
            (should (equal (lrf-test-xref-places
                            (xref-backend-definitions (xref-find-backend) "square-of"))
                           '(("src/circle.lisp" 8))))))))))

(ert-deftest lrf-test-project-outline-degraded ()
  "A map cut down to per-file counts keeps its file headers as buttons."
  (lrf-test-with-shapes
    (lrf-test-require-project-map)
    (with-current-buffer (lrf-test-visit "src/generics.lisp" 1)
      (insert ";; unsaved\n")
      (with-current-buffer (lisp-read-file-project-outline)
        (lisp-read-file--render-project `((root . ,lrf-test-project) (path . ".")
                                          (arguments (limit . 5))))
        (should (string-match-p "^[0-9]+ src/circle.lisp$"
                                (buffer-string)))
        ;; The tool's note names its arguments; the buffer says how to narrow from Emacs.
        (should (string-match-p
                 (regexp-quote "[In Emacs: C-u M-x lisp-read-file-project-outline asks for \
kinds; M-x lisp-read-file-project-outline on a directory's line in Dired shows its map.]")
                 (buffer-string)))
        (should (string-match-p "\\[cut: see the footer\\].*\\[buffers modified"
                                (lisp-read-file--header-line)))
        (should (string-prefix-p (format " %s  project" (abbreviate-file-name lrf-test-project))
                                 (lisp-read-file--header-line)))
        (should (equal (lrf-test-check-project-buttons (current-buffer))
                       '(("shapes.asd" 1) ("src/package.lisp" 1) ("src/generics.lisp" 1)
                         ("src/circle.lisp" 1) ("src/square.lisp" 1)))))
      (set-buffer-modified-p nil))))

(ert-deftest lrf-test-project-outline-asd-kinds ()
  "The outline of the .asd at point; kinds and features read with a prefix argument."
  (lrf-test-with-shapes
    (lrf-test-require-project-map)
    (with-current-buffer (lrf-test-visit "shapes.asd" 1)
      (let ((answers '(("defmethod") ("sbcl")))
            (prompts nil))
        (cl-letf (((symbol-function 'completing-read-multiple)
                   (lambda (prompt &rest _)
                     (push prompt prompts)
                     (pop answers))))
          (let ((current-prefix-arg '(4)))
            (call-interactively #'lisp-read-file-project-outline)))
        (should (= (length prompts) 2))
        (with-current-buffer (window-buffer (selected-window))
          (should (equal (alist-get 'path lisp-read-file--project) "shapes.asd"))
          (should (equal (alist-get 'arguments lisp-read-file--project)
                         '((kinds . ["defmethod"]) (features . ["sbcl"]))))
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (should (string-match-p "(defmethod area ((c circle))" text))
            (should-not (string-match-p "(defun square-of" text))
            (should-not (string-match-p "(defgeneric area" text)))
          (lrf-test-check-project-buttons (current-buffer)))))
    ;; In Dired, the .asd file at point.
    (require 'dired)
    (with-current-buffer (dired lrf-test-project)
      (goto-char (point-min))
      (search-forward "shapes.asd")
      (with-current-buffer (call-interactively #'lisp-read-file-project-outline)
        (should (equal (alist-get 'path lisp-read-file--project) "shapes.asd"))
        (should (null (alist-get 'arguments lisp-read-file--project))))
      ;; A directory at point: its map, to narrow a map too large for the whole tree.
      (goto-char (point-min))
      (re-search-forward " src$")
      (with-current-buffer (call-interactively #'lisp-read-file-project-outline)
        (should (equal (alist-get 'path lisp-read-file--project) "src"))
        (should (equal (buffer-name) "*lisp-read-file project: src*"))
        (should (string-match-p "^==> src/circle.lisp <==" (buffer-string)))
        (should-not (string-match-p "shapes.asd" (buffer-string))))
      (kill-buffer))))

(provide 'lisp-read-file-tests)
;;; lisp-read-file-tests.el ends here
