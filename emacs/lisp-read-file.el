;;; lisp-read-file.el --- Outline and expand Common Lisp files with lisp-read-file  -*- lexical-binding: t; -*-

;; Copyright (C) 2025 The lisp-read-file authors

;; Author: The lisp-read-file authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages, lisp, tools
;; URL: https://github.com/lisp-read-file/lisp-read-file
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.

;;; Commentary:

;; An Emacs companion for the `lisp-read-file' program, which reads
;; Common Lisp files without evaluating them: a collapsed outline of
;; every top-level definition, or chosen definitions expanded verbatim,
;; with true line numbers.
;;
;; The package starts one `lisp-read-file mcp --root ROOT' process per
;; project root and per Emacs session, and talks to it with
;; newline-delimited JSON-RPC 2.0 (the MCP stdio transport).  The
;; process is started on first use and restarted transparently when it
;; has died.  Its standard error goes to the buffer
;; "*lisp-read-file stderr: ROOT*", never into the JSON stream.
;;
;; The project root of a file is given by
;; `lisp-read-file-root-function'; by default the root of the
;; `project-current' project (project.el), else the nearest directory
;; above the file holding ".git", else the nearest one holding an .asd
;; file, else the file's own directory.
;;
;; Commands:
;;
;;   `lisp-read-file-outline'            collapsed view of this file
;;   `lisp-read-file-expand'             expand definitions by name
;;   `lisp-read-file-find-file-outline'  collapsed view of another file
;;   `lisp-read-file-project-outline'    project map of a directory or .asd
;;   `lisp-read-file-shutdown'           stop the companion processes
;;
;; From Lisp, `lisp-read-file-call' returns the result of one call of
;; the tool (the view text and its meta data) as an alist, and
;; `lisp-read-file-find' the result of the lisp-find tool (definitions
;; and references across the project).
;;
;; Each numbered line of an outline buffer is a button: RET or a mouse
;; click visits that line of the file.  In the outline buffer `n' and
;; `p' move between lines, `g' asks the program again, `q' quits, and
;; the C-c C-o keys below work on the file shown.
;;
;; `lisp-read-file-mode' is a minor mode for `lisp-mode' buffers: it
;; builds the `imenu' index from the outline (see
;; `lisp-read-file-imenu-create-index' and `lisp-read-file-imenu-groups'),
;; installs an xref backend, and binds the commands under the prefix
;; C-c C-o, which neither `lisp-mode', SLIME nor SLY use:
;;
;;   C-c C-o C-o, C-c C-o o   `lisp-read-file-outline'
;;   C-c C-o C-e, C-c C-o e   `lisp-read-file-expand'
;;   C-c C-o C-f, C-c C-o f   `lisp-read-file-find-file-outline'
;;   C-c C-o C-p, C-c C-o p   `lisp-read-file-project-outline'
;;   C-c C-o i                `imenu'
;;
;; The xref backend (`lisp-read-file-xref-backend') answers M-.
;; (`xref-find-definitions'), M-? (`xref-find-references') and C-M-.
;; (`xref-find-apropos') from the files of the project root, read by
;; the lisp-find tool: no Lisp has to run or to have loaded the code.
;; It is a fallback: a backend that another buffer-local function of
;; `xref-backend-functions' gives (SLIME's or SLY's style, when
;; connected) comes first, unless `lisp-read-file-xref-first' is set.
;;
;; The program reads files from disk.  When the buffer of a file has
;; unsaved changes the outline is of the saved file, its line numbers
;; may be off, and the commands say so in a message (and in the header
;; line of the outline buffer).
;;
;; The package is three files: this one (the companion process, tool
;; calls, `lisp-read-file-find' and the minor mode),
;; lisp-read-file-outline.el (outline buffers, expansion, the project
;; outline and the `imenu' index) and lisp-read-file-xref.el (the xref
;; backend).  Put the directory holding them on `load-path' and
;; require `lisp-read-file': the commands of the other two files are
;; autoloaded from here and load their file on first use.
;;
;; Neither SLIME nor SLY is needed; both can be used at the same time.
;; Emacs must be built with native JSON support (libjansson), as the
;; usual builds of Emacs 27 and later are.

;;; Code:

(require 'button)
(require 'cl-lib)
(require 'imenu)
(require 'lisp-mode)
(require 'subr-x)
(require 'thingatpt)
(require 'url-util)
(require 'xref)

(declare-function json-parse-string "json.c" (string &rest args))
(declare-function json-serialize "json.c" (object &rest args))
(declare-function project-root "project" (project))
(declare-function project-roots "project" (project))
(declare-function project-current "project" (&optional maybe-prompt directory))

(defconst lisp-read-file-version "0.1.0"
  "Version of the Emacs companion of lisp-read-file.")

(defconst lisp-read-file-protocol-version "2025-06-18"
  "MCP protocol version sent in the `initialize' request.")

(defconst lisp-read-file-tool-name "lisp-read-file"
  "Name of the MCP tool that reads a file.")

;;;; Customization

(defgroup lisp-read-file nil
  "Outline and expand Common Lisp files with the lisp-read-file program."
  :group 'tools
  :group 'lisp
  :prefix "lisp-read-file-")

(defcustom lisp-read-file-executable "lisp-read-file"
  "The lisp-read-file program, a file name or a command name.
A command name is looked up in the variable `exec-path'.  When this
names no executable file, the commands signal a `user-error'."
  :type 'string)

(defcustom lisp-read-file-arguments nil
  "Extra arguments for the program, added after \"mcp --root ROOT\".
For example (\"--max-file-bytes\" \"4194304\")."
  :type '(repeat string))

(defcustom lisp-read-file-timeout 10
  "Seconds to wait for an answer of the companion process.
A process that does not answer in time is stopped; the next call
starts a new one."
  :type 'number)

(defcustom lisp-read-file-root-function #'lisp-read-file-default-root
  "Function of one argument, an absolute file name, that returns its root.
The root is the directory given to \"lisp-read-file mcp --root\"; one
process runs per root.  The file must lie inside the root."
  :type 'function)

(defcustom lisp-read-file-xref-first nil
  "Non-nil means the lisp-read-file xref backend comes before the others.
By default it is a fallback: when another function of the buffer's
`xref-backend-functions' (such as the backend of SLIME or SLY when
connected to a Lisp) offers a backend, that one is used.  With a
non-nil value `lisp-read-file-mode' puts its backend first.
Changing it takes effect when the mode is turned on again."
  :type 'boolean)

;;;; Errors

(define-error 'lisp-read-file-error "lisp-read-file")
(define-error 'lisp-read-file-process-error
  "lisp-read-file process" 'lisp-read-file-error)

;;;; JSON

(defun lisp-read-file--json-read (string)
  "Parse the JSON text STRING: objects as alists, arrays as lists.
JSON null and false are both nil."
  (json-parse-string string :object-type 'alist :array-type 'list
                     :null-object nil :false-object nil))

(defun lisp-read-file--json-write (object)
  "Return OBJECT as one line of JSON.
Objects are alists (or hash tables for {}), arrays are vectors,
false is :false."
  (json-serialize object))

;;;; Connections

(cl-defstruct (lisp-read-file--conn
               (:constructor lisp-read-file--conn-create)
               (:copier nil))
  "A companion process for one project root."
  root command process stderr-process stderr-buffer
  (stderr-start nil)
  (next-id 0)
  (replies (make-hash-table))
  (chunks nil)
  (server-info nil))

(defvar lisp-read-file--connections (make-hash-table :test #'equal)
  "Connections by project root (a directory name).")

(defun lisp-read-file--command (root)
  "Return the command line of the companion process for ROOT."
  (let ((program (and (stringp lisp-read-file-executable)
                      (not (string= lisp-read-file-executable ""))
                      (executable-find lisp-read-file-executable))))
    (unless program
      (user-error "Cannot find the lisp-read-file program %S: build it \
\(cargo build --release) and put it on the variable `exec-path', or set \
`lisp-read-file-executable' to its file name"
                  lisp-read-file-executable))
    (append (list program "mcp" "--root" (directory-file-name root))
            lisp-read-file-arguments)))

(defun lisp-read-file--stderr-tail (conn)
  "Return the last lines the process of CONN wrote on standard error."
  (let ((buffer (lisp-read-file--conn-stderr-buffer conn))
        (start (lisp-read-file--conn-stderr-start conn)))
    (if (not (buffer-live-p buffer))
        ""
      (with-current-buffer buffer
        (let ((lines (split-string (buffer-substring-no-properties
                                    (if (markerp start) start (point-min))
                                    (point-max))
                                   "\n" t "[ \t]+")))
          (setq lines (cl-remove-if (lambda (line)
                                      (string-prefix-p "[lisp-read-file.el]" line))
                                    lines))
          (mapconcat #'identity (last lines 4) "\n"))))))

(defun lisp-read-file--died (conn)
  "Signal that the process of CONN is not running."
  (let ((stderr (lisp-read-file--conn-stderr-process conn)))
    ;; Read what it wrote on standard error before it ended.
    (while (and (process-live-p stderr)
                (accept-process-output stderr 0.2 nil t))))
  (let ((tail (lisp-read-file--stderr-tail conn))
        (process (lisp-read-file--conn-process conn)))
    (signal 'lisp-read-file-process-error
            (list (format "%s is not running (%s %s)%s"
                          (process-name process)
                          (process-status process)
                          (process-exit-status process)
                          (if (string= tail "")
                              ""
                            (format "; its standard error says: %s" tail)))))))

(defun lisp-read-file--log (conn format-string &rest args)
  "Append FORMAT-STRING with ARGS as a line to the stderr buffer of CONN."
  (let ((buffer (lisp-read-file--conn-stderr-buffer conn)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (save-excursion
          (goto-char (point-max))
          (let ((inhibit-read-only t))
            (insert "[lisp-read-file.el] " (apply #'format format-string args)
                    "\n")))))))

(defun lisp-read-file--send (conn message)
  "Send MESSAGE, an alist, as one JSON line to the process of CONN."
  (let ((process (lisp-read-file--conn-process conn)))
    (unless (process-live-p process)
      (lisp-read-file--died conn))
    (condition-case nil
        (process-send-string process (concat (lisp-read-file--json-write message)
                                             "\n"))
      (error (lisp-read-file--died conn)))))

(defun lisp-read-file--answer-request (conn id method)
  "Answer the request ID of METHOD that the server of CONN sent."
  (let ((root (directory-file-name (lisp-read-file--conn-root conn))))
    (lisp-read-file--send
     conn
     (cond
      ((equal method "ping")
       `((jsonrpc . "2.0") (id . ,id) (result . ,(make-hash-table))))
      ((equal method "roots/list")
       `((jsonrpc . "2.0") (id . ,id)
         (result (roots . [((uri . ,(concat "file://"
                                            (url-hexify-string
                                             root url-path-allowed-chars)))
                            (name . ,(file-name-nondirectory root)))]))))
      (t
       `((jsonrpc . "2.0") (id . ,id)
         (error (code . -32601)
                (message . ,(format "Method not found: %s" method)))))))))

(defun lisp-read-file--handle-message (conn message)
  "Dispatch MESSAGE, a parsed JSON-RPC message from the server of CONN."
  (let ((id (alist-get 'id message))
        (method (alist-get 'method message)))
    (cond
     ((and method id) (lisp-read-file--answer-request conn id method))
     (method nil)                        ; A notification: nothing to do.
     ((and id (eq (gethash id (lisp-read-file--conn-replies conn)) 'pending))
      (puthash id message (lisp-read-file--conn-replies conn)))
     ((alist-get 'error message)
      (lisp-read-file--log conn "Error reply without request: %S" message)))))

(defun lisp-read-file--handle-line (conn line)
  "Handle LINE, one complete line of output of the process of CONN."
  (unless (string-match-p "\\`[ \t\r]*\\'" line)
    (let ((message (condition-case nil
                       (lisp-read-file--json-read line)
                     (error
                      (lisp-read-file--log conn "Not JSON: %s" line)
                      nil))))
      (if (and (consp message) (symbolp (car-safe (car message))))
          (lisp-read-file--handle-message conn message)
        (when message
          (lisp-read-file--log conn "Not a JSON-RPC message: %s" line))))))

(defun lisp-read-file--filter (process output)
  "Process filter: split OUTPUT of PROCESS into lines and handle them.
A line may arrive in several pieces; the pieces are kept until its
newline comes."
  (let ((conn (process-get process 'lisp-read-file-conn))
        (start 0)
        newline)
    (when conn
      (while (setq newline (cl-position ?\n output :start start))
        (let ((line (apply #'concat
                           (nreverse (cons (substring output start newline)
                                           (lisp-read-file--conn-chunks conn))))))
          (setf (lisp-read-file--conn-chunks conn) nil)
          (setq start (1+ newline))
          (condition-case err
              (lisp-read-file--handle-line conn line)
            (error (lisp-read-file--log conn "Error handling a message: %s"
                                        (error-message-string err))))))
      (when (< start (length output))
        (push (substring output start) (lisp-read-file--conn-chunks conn))))))

(defun lisp-read-file--sentinel (process event)
  "Process sentinel: note in the stderr buffer that PROCESS ended with EVENT."
  (let ((conn (process-get process 'lisp-read-file-conn)))
    (when (and conn (not (process-live-p process)))
      (lisp-read-file--log conn "%s: %s" (process-name process)
                           (string-trim-right event)))))

(defun lisp-read-file--stderr-filter (process output)
  "Append OUTPUT of the standard error pipe PROCESS to its buffer."
  (let ((buffer (process-buffer process)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (save-excursion
          (goto-char (point-max))
          (let ((inhibit-read-only t))
            (insert output)))))))

(defun lisp-read-file--stderr-sentinel (process _event)
  "Delete the standard error pipe PROCESS once it is closed."
  (unless (process-live-p process)
    (delete-process process)))

(defun lisp-read-file--start (root command)
  "Start COMMAND for ROOT and return its initialized connection."
  (let* ((label (abbreviate-file-name (directory-file-name root)))
         (stderr-buffer (get-buffer-create
                         (format "*lisp-read-file stderr: %s*" label)))
         (stderr (make-pipe-process
                  :name (format "lisp-read-file stderr<%s>" label)
                  :buffer stderr-buffer
                  :coding 'utf-8-unix
                  :noquery t
                  :filter #'lisp-read-file--stderr-filter
                  :sentinel #'lisp-read-file--stderr-sentinel))
         (default-directory root)
         (process (condition-case err
                      (make-process
                       :name (format "lisp-read-file<%s>" label)
                       :command command
                       :connection-type 'pipe
                       :coding 'utf-8-unix
                       :noquery t
                       :stderr stderr
                       :filter #'lisp-read-file--filter
                       :sentinel #'lisp-read-file--sentinel)
                    (error
                     (delete-process stderr)
                     (signal 'lisp-read-file-process-error
                             (list (format "Cannot start %s: %s"
                                           (car command)
                                           (error-message-string err)))))))
         (conn (lisp-read-file--conn-create
                :root root :command command :process process
                :stderr-process stderr :stderr-buffer stderr-buffer)))
    (process-put process 'lisp-read-file-conn conn)
    (lisp-read-file--log conn "started %s" (mapconcat #'identity command " "))
    (with-current-buffer stderr-buffer
      (setf (lisp-read-file--conn-stderr-start conn) (point-max-marker)))
    (condition-case err
        (progn
          (setf (lisp-read-file--conn-server-info conn)
                (lisp-read-file--request
                 conn "initialize"
                 `((protocolVersion . ,lisp-read-file-protocol-version)
                   (capabilities . ,(make-hash-table))
                   (clientInfo (name . "lisp-read-file.el")
                               (version . ,lisp-read-file-version)))))
          (lisp-read-file--send conn '((jsonrpc . "2.0")
                                       (method . "notifications/initialized"))))
      (error
       (lisp-read-file--stop conn)
       (signal (car err) (cdr err))))
    conn))

(defun lisp-read-file--stop (conn)
  "Stop the process of CONN."
  (let ((process (lisp-read-file--conn-process conn)))
    (when (process-live-p process)
      (ignore-errors (process-send-eof process))
      (delete-process process))))

(defun lisp-read-file--connection (root)
  "Return a live, initialized connection for ROOT, starting one if needed."
  (let ((command (lisp-read-file--command root))
        (conn (gethash root lisp-read-file--connections)))
    (unless (and conn
                 (process-live-p (lisp-read-file--conn-process conn))
                 (equal (lisp-read-file--conn-command conn) command))
      (when conn
        (lisp-read-file--stop conn)
        (remhash root lisp-read-file--connections))
      (setq conn (lisp-read-file--start root command))
      (puthash root conn lisp-read-file--connections))
    conn))

(defun lisp-read-file--request (conn method params)
  "Send the request METHOD with PARAMS on CONN and wait for its result.
Signal `lisp-read-file-error' for an error reply or a timeout, and
`lisp-read-file-process-error' when the process ends first."
  (let* ((id (cl-incf (lisp-read-file--conn-next-id conn)))
         (replies (lisp-read-file--conn-replies conn))
         (process (lisp-read-file--conn-process conn))
         (deadline (+ (float-time) lisp-read-file-timeout))
         reply)
    (puthash id 'pending replies)
    (unwind-protect
        (progn
          (lisp-read-file--send conn `((jsonrpc . "2.0") (id . ,id)
                                       (method . ,method)
                                       ,@(and params `((params . ,params)))))
          (while (eq (setq reply (gethash id replies)) 'pending)
            (cond
             ((not (process-live-p process))
              ;; Read what is left in the pipe: the reply may be there.
              (while (accept-process-output process 0 nil t))
              (when (eq (gethash id replies) 'pending)
                (lisp-read-file--died conn)))
             ((> (float-time) deadline)
              (lisp-read-file--stop conn)
              (signal 'lisp-read-file-error
                      (list (format "No answer to %s within %s seconds; \
the process was stopped and will be restarted" method lisp-read-file-timeout))))
             (t (accept-process-output process 0.05)))))
      (remhash id replies))
    (let ((rpc-error (alist-get 'error reply)))
      (when rpc-error
        (signal 'lisp-read-file-error
                (list (format "%s (JSON-RPC error %s in %s)"
                              (alist-get 'message rpc-error)
                              (alist-get 'code rpc-error)
                              method)))))
    (alist-get 'result reply)))

;;;###autoload
(defun lisp-read-file-shutdown ()
  "Stop every lisp-read-file companion process of this Emacs session."
  (interactive)
  (maphash (lambda (_root conn) (lisp-read-file--stop conn))
           lisp-read-file--connections)
  (clrhash lisp-read-file--connections))

;;;; Roots and tool calls

(defun lisp-read-file--project-directory (file)
  "Return the root of the project.el project of FILE, or nil."
  (when (require 'project nil t)
    (let* ((directory (file-name-directory file))
           (project (ignore-errors (project-current nil directory))))
      (when project
        (if (fboundp 'project-root)
            (project-root project)
          (car (with-no-warnings (project-roots project))))))))

(defun lisp-read-file-default-root (file)
  "Return the root directory for FILE.
That is the root of its `project-current' project, else the nearest
directory above FILE holding \".git\", else the nearest one holding
an ASDF system definition (a file ending in \".asd\", as the
libraries Debian installs without .git do), else the directory of
FILE."
  (or (lisp-read-file--project-directory file)
      (locate-dominating-file file ".git")
      (locate-dominating-file
       file (lambda (directory)
              (and (file-directory-p directory)
                   (directory-files directory nil "\\.asd\\'" t))))
      (file-name-directory file)))

(defun lisp-read-file--root (file)
  "Return the root for FILE, an absolute true file name, as a directory name."
  (let* ((given (funcall lisp-read-file-root-function file))
         (root (and given (file-name-as-directory
                           (file-truename (expand-file-name given))))))
    (if (and root (string-prefix-p root file))
        root
      (file-name-directory file))))

(defun lisp-read-file--true-file (file)
  "Return the absolute true name of FILE, refusing remote files."
  (let ((file (expand-file-name file)))
    (when (file-remote-p file)
      (user-error "Remote files are not supported by lisp-read-file: %s" file))
    (file-truename file)))

(defun lisp-read-file--call-tool (root tool arguments)
  "Call the MCP tool TOOL of the companion process of ROOT with ARGUMENTS.
ROOT is a directory name; ARGUMENTS is an alist of tool arguments,
paths relative to ROOT.  Return the structured result as an alist,
with `content' the text of the result when the structured result
has none.  Errors are signalled as `lisp-read-file-call' says."
  (let* ((params `((name . ,tool) (arguments ,@arguments)))
         (result (condition-case err
                     (condition-case nil
                         (lisp-read-file--request (lisp-read-file--connection root)
                                                  "tools/call" params)
                       (lisp-read-file-process-error
                        (lisp-read-file--request (lisp-read-file--connection root)
                                                 "tools/call" params)))
                   ;; Plain messages, without the quotes `error-message-string'
                   ;; puts around the data of other conditions.
                   (lisp-read-file-error
                    (error "lisp-read-file: %s" (cadr err)))))
         (structured (alist-get 'structuredContent result))
         ;; The first text block is the view; a byte window cut short of the end
         ;; asked says so in a second block (docs/guard.md#size-cap).
         (text (or (cl-some (lambda (item)
                              (and (equal (alist-get 'type item) "text")
                                   (alist-get 'text item)))
                            (alist-get 'content result))
                   "")))
    (if (alist-get 'isError result)
        (user-error "%s" (if (alist-get 'code structured)
                             (format "%s: %s" (alist-get 'code structured)
                                     (or (alist-get 'message structured) text))
                           text))
      (if (stringp (alist-get 'content structured))
          structured
        (cons (cons 'content text) structured)))))

(defun lisp-read-file-call (file arguments)
  "Call the lisp-read-file tool on FILE with ARGUMENTS.
ARGUMENTS is an alist of tool arguments besides path, as in the
tool's input schema: (collapsed . :false), (name_pattern . \"foo\")...
Return the structured result, an alist with `path', `mode',
`content' and `meta', plus `root' and `file' (the absolute file
name).

A tool error (a result with isError) signals a `user-error' whose
message is \"CODE: message\", e.g. \"NOT_FOUND: no such file: a.lisp...\".
A process that died is restarted and the call made again, once.
Other failures of the process (it cannot start, it dies twice, it
does not answer in time) signal an `error'."
  (let* ((file (lisp-read-file--true-file file))
         (root (lisp-read-file--root file)))
    (append `((root . ,root) (file . ,file))
            (lisp-read-file--call-tool
             root lisp-read-file-tool-name
             `((path . ,(file-relative-name file root)) ,@arguments)))))

(defun lisp-read-file--call-pages (file arguments &optional max-pages)
  "Call the tool on FILE with ARGUMENTS, following `next_offset'.
Return the list of the results of at most MAX-PAGES (default 50) calls."
  (let ((results nil)
        (offset nil)
        (pages 0))
    (while (progn
             (let ((result (lisp-read-file-call
                            file (if offset
                                     (cons (cons 'offset offset) arguments)
                                   arguments))))
               (push result results)
               (cl-incf pages)
               (setq offset (alist-get 'next_offset (alist-get 'meta result)))
               (and (integerp offset) (< pages (or max-pages 50))))))
    (nreverse results)))

;;;; Reading the views

(defconst lisp-read-file--gc-cons-threshold (* 64 1024 1024)
  "The `gc-cons-threshold' while a view is rendered or indexed, at least.")

(defmacro lisp-read-file--with-fewer-gcs (&rest body)
  "Run BODY with `gc-cons-threshold' at least `lisp-read-file--gc-cons-threshold'.
Rendering a long view makes many small objects (text properties,
strings); with the default threshold Emacs collects garbage many
times, each a pass over the whole heap: 8 collections took 1.3 s of
the 1.5 s of a 2,500-form outline.  BODY's work is bounded by the
view's size, so the memory it may make before a collection is too."
  (declare (indent 0) (debug t))
  `(let ((gc-cons-threshold (max gc-cons-threshold lisp-read-file--gc-cons-threshold)))
     ,@body))

(defconst lisp-read-file--numbered-line-regexp
  "\\` *\\([0-9]+\\)\\([:-]\\)\\(?: \\|\\'\\)"
  "Regexp matching a numbered line of a view: \"NN: \" or \"NN- \".")

(defun lisp-read-file--numbered-lines (text)
  "Return the numbered lines of the view TEXT as (LINE . REST) pairs.
REST is the text after \"NN: \", with its indentation."
  (let ((lines nil))
    (dolist (line (split-string text "\n"))
      (when (string-match lisp-read-file--numbered-line-regexp line)
        (push (cons (string-to-number (match-string 1 line))
                    (substring line (match-end 0)))
              lines)))
    (nreverse lines)))

(defun lisp-read-file--sexp-text (limit)
  "Move over the sexp at point, up to LIMIT; return its text or nil."
  (skip-chars-forward " \t\n" limit)
  (let ((start (point)))
    (when (and (< start limit)
               (not (eq (char-after) ?\)))
               (ignore-errors (forward-sexp) t)
               (<= (point) limit))
      (buffer-substring-no-properties start (point)))))

(defun lisp-read-file--regexp-quote (string)
  "Quote STRING for the Rust regex syntax of lisp-read-file patterns."
  (replace-regexp-in-string "[][\\\\.+*?(){}|^$]"
                            (lambda (char) (concat "\\" char))
                            string t t))

(defun lisp-read-file--strip-package (name)
  "Return NAME, a symbol name, without its package prefix, in lower case."
  (downcase (if (string-match "\\`[^:|\"]*::?\\([^:]+\\)\\'" name)
                (match-string 1 name)
              name)))

(defun lisp-read-file--parse-signature (signature)
  "Parse SIGNATURE, one collapsed-view signature, e.g. \"(defun f (x) ...)\".
Return (OPERATOR NAME CONDITIONALS) or nil.  OPERATOR is without
package and in lower case; NAME is as written, for methods followed
by their qualifiers and specializers: \"area :around (shape)\", and
nil when the signature ends after the operator (a container's first
line, \"(progn\").
CONDITIONALS are the reader conditionals in front of the form, as
written: (\"#+sbcl\" \"#-(or a b)\")."
  (with-temp-buffer
    (set-syntax-table lisp-mode-syntax-table)
    (insert signature)
    (goto-char (point-min))
    (let ((conditionals nil))
      ;; Reader conditionals in front: #+sbcl, #-(or a b).
      (while (looking-at "[ \t]*\\(#[-+]\\)")
        (let ((start (match-beginning 1)))
          (goto-char (match-end 0))
          (lisp-read-file--sexp-text (point-max))
          (push (buffer-substring-no-properties start (point)) conditionals)))
      (let ((parsed (lisp-read-file--parse-form-head)))
        (and parsed (append parsed (list (nreverse conditionals))))))))

(defun lisp-read-file--parse-form-head ()
  "Parse the form at point in a signature: return (OPERATOR NAME) or nil.
NAME may be nil.
See `lisp-read-file--parse-signature'."
  (skip-chars-forward " \t")
  (when (eq (char-after) ?\()
    (forward-char 1)
    (let* ((limit (point-max))
           (operator (lisp-read-file--sexp-text limit))
           (name-start (progn (skip-chars-forward " \t\n") (point)))
           (name (and operator (lisp-read-file--sexp-text limit))))
      (when operator
        (setq operator (lisp-read-file--strip-package operator))
        ;; (defstruct (point (:conc-name p-)) ...) is named point,
        ;; (defun (setf foo) ...) is named (setf foo).
        (when (and name (eq (char-after name-start) ?\()
                   (not (string-match-p "\\`(setf[ \t]" name)))
          (save-excursion
            (goto-char (1+ name-start))
            (setq name (or (lisp-read-file--sexp-text limit) name))))
        (when (and name (equal operator "defmethod"))
          (setq name (lisp-read-file--method-key name limit)))
        (list operator name)))))

(defun lisp-read-file--method-key (name limit)
  "Return NAME followed by the qualifiers and specializers of the method at point.
Point is after the name in a defmethod signature; LIMIT its end.
The key is \"NAME QUALIFIERS (SPECIALIZERS)\", as the tool prints it:
\"area :around (shape)\"; an unspecialized parameter is t.  Without
a lambda list, NAME."
  (let ((qualifiers nil)
        (specializers nil)
        item)
    (while (and (progn (skip-chars-forward " \t\n") (< (point) limit))
                (not (memq (char-after) '(?\( ?\))))
                (setq item (lisp-read-file--sexp-text limit)))
      (unless (string= item "...")
        (push item qualifiers)))
    (if (not (eq (char-after) ?\())
        name
      (forward-char 1)
      (while (and (progn (skip-chars-forward " \t\n") (< (point) limit))
                  (not (eq (char-after) ?&))
                  (not (eq (char-after) ?\))))
        (if (eq (char-after) ?\()
            (save-excursion
              (forward-char 1)
              (lisp-read-file--sexp-text limit)
              (push (or (lisp-read-file--sexp-text limit) "t") specializers))
          (push "t" specializers))
        (unless (lisp-read-file--sexp-text limit)
          (goto-char limit)))
      (format "%s%s (%s)" name
              (mapconcat (lambda (q) (concat " " q)) (nreverse qualifiers) "")
              (mapconcat #'identity (nreverse specializers) " ")))))

(defun lisp-read-file--warn-if-modified (file)
  "Warn if the buffer of FILE is modified; return non-nil then."
  (let ((buffer (find-buffer-visiting file)))
    (when (and buffer (buffer-modified-p buffer))
      (message "Buffer %s has unsaved changes: lisp-read-file shows the file \
as saved on disk, and its line numbers may be off" (buffer-name buffer))
      t)))

;;;; Finding definitions and references: lisp-find

(defconst lisp-read-file-find-tool-name "lisp-find"
  "Name of the MCP tool that finds definitions and references.")

(defcustom lisp-read-file-find-max-pages 5
  "Most calls of the lisp-find tool for one search.
A search whose result is cut is continued from its `next_offset'
up to this many calls; what is left is not shown, and a message
says so."
  :type 'integer)

(defun lisp-read-file--directory-root (directory)
  "Return the root for DIRECTORY (a directory) as a directory name."
  (let ((directory (file-name-as-directory (lisp-read-file--true-file directory))))
    (lisp-read-file--root directory)))

(defun lisp-read-file--buffer-root ()
  "Return the root of the current buffer's file, else of `default-directory'."
  (if buffer-file-name
      (lisp-read-file--root (lisp-read-file--true-file buffer-file-name))
    (lisp-read-file--directory-root default-directory)))

(defun lisp-read-file-find (arguments &optional root)
  "Call the lisp-find tool with ARGUMENTS under ROOT and return its result.
ROOT defaults to the root of the current buffer's file.  ARGUMENTS
is an alist of the tool's arguments: exactly one of `name',
`name_pattern' or `symbol', and optionally `path' (default \".\",
the root), `kinds', `include_body', `detail', `offset', `limit'.  The result
is the tool's structured result as an alist (`definitions' or
`references', `files_skipped', `total', `truncated', `next_offset'...)
plus `root'.  Errors are signalled as `lisp-read-file-call' says."
  (let ((root (or root (lisp-read-file--buffer-root))))
    (cons (cons 'root root)
          (lisp-read-file--call-tool
           root lisp-read-file-find-tool-name
           (if (assq 'path arguments) arguments (cons '(path . ".") arguments))))))

(defun lisp-read-file--find-items (root arguments key)
  "Return the items under KEY of the lisp-find results for ARGUMENTS in ROOT.
KEY is `definitions', `references', `callers' or `callees'.  Cut
results are continued from their `next_offset', up to
`lisp-read-file-find-max-pages' calls; a message says when some are
left out."
  (let ((found (lisp-read-file--find-pages root arguments key)))
    (unless (cdr found)
      (message "lisp-read-file: showing the first %d results only" (length (car found))))
    (car found)))

(defun lisp-read-file--find-pages (root arguments key &optional max-pages)
  "Return (ITEMS . COMPLETE) for the lisp-find results for ARGUMENTS in ROOT.
ITEMS are the items under KEY of the pages read, up to MAX-PAGES
\(default `lisp-read-file-find-max-pages'); COMPLETE is nil when more
were left."
  (let ((max-pages (or max-pages lisp-read-file-find-max-pages))
        (items nil)
        (offset nil)
        (pages 0)
        result)
    (while (progn
             (setq result (lisp-read-file-find
                           (if offset (cons (cons 'offset offset) arguments) arguments)
                           root))
             (setq items (nconc items (copy-sequence (alist-get key result))))
             (cl-incf pages)
             (setq offset (and (alist-get 'truncated result)
                               (alist-get 'next_offset result)))
             (and (integerp offset) (< pages max-pages))))
    (cons items (not (integerp offset)))))

(defun lisp-read-file--modified-buffers (root)
  "Return the modified buffers visiting files under ROOT."
  (cl-remove-if-not
   (lambda (buffer)
     (let ((file (buffer-file-name buffer)))
       (and file (buffer-modified-p buffer)
            (string-prefix-p root (file-truename file)))))
   (buffer-list)))

(defun lisp-read-file--warn-if-modified-under (root)
  "Warn if buffers visiting files under ROOT are modified; return them."
  (let ((buffers (lisp-read-file--modified-buffers root)))
    (when buffers
      (message "%s unsaved changes: lisp-read-file reads the files as \
saved on disk, and its line numbers may be off"
               (if (cdr buffers)
                   (format "Buffers %s have"
                           (mapconcat #'buffer-name buffers ", "))
                 (format "Buffer %s has" (buffer-name (car buffers))))))
    buffers))

(defvar-local lisp-read-file--saved-imenu-function nil
  "The `imenu-create-index-function' before `lisp-read-file-mode'.
The value is (LOCALP . VALUE), LOCALP non-nil if it was buffer-local.")

(defvar-local lisp-read-file--saved-space-replacement nil
  "The `imenu-space-replacement' before `lisp-read-file-mode', or nil.
The value is (LOCALP . VALUE), LOCALP non-nil if it was buffer-local.")

;;;; The other files of the package

;; The commands and functions of lisp-read-file-outline.el and
;; lisp-read-file-xref.el that the minor mode binds or installs: they
;; load their file on first use.
(autoload 'lisp-read-file-outline "lisp-read-file-outline" nil t)
(autoload 'lisp-read-file-expand "lisp-read-file-outline" nil t)
(autoload 'lisp-read-file-find-file-outline "lisp-read-file-outline" nil t)
(autoload 'lisp-read-file-project-outline "lisp-read-file-outline" nil t)
(autoload 'lisp-read-file-imenu-create-index "lisp-read-file-outline")
(autoload 'lisp-read-file-xref-backend "lisp-read-file-xref")
(autoload 'lisp-read-file-who-calls "lisp-read-file-xref" nil t)
(autoload 'lisp-read-file-callees "lisp-read-file-xref" nil t)

;;;; Minor mode

(defvar lisp-read-file-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-o") #'lisp-read-file-outline)
    (define-key map (kbd "o") #'lisp-read-file-outline)
    (define-key map (kbd "C-e") #'lisp-read-file-expand)
    (define-key map (kbd "e") #'lisp-read-file-expand)
    (define-key map (kbd "C-f") #'lisp-read-file-find-file-outline)
    (define-key map (kbd "f") #'lisp-read-file-find-file-outline)
    (define-key map (kbd "i") #'imenu)
    (define-key map (kbd "C-p") #'lisp-read-file-project-outline)
    (define-key map (kbd "p") #'lisp-read-file-project-outline)
    map)
  "Keymap of the lisp-read-file commands.
`lisp-read-file-mode' binds it to a prefix key:
\\{lisp-read-file-command-map}")

(defvar lisp-read-file-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-o") lisp-read-file-command-map)
    map)
  "Keymap of `lisp-read-file-mode'.")

;;;###autoload
(define-minor-mode lisp-read-file-mode
  "Use lisp-read-file for `imenu' and xref and bind its commands.
The `imenu' index is built from the outline of the saved file by
`lisp-read-file-imenu-create-index'; disabling the mode restores
the previous index function.

The mode adds `lisp-read-file-xref-backend' to the buffer-local
`xref-backend-functions': \\[xref-find-definitions], \\[xref-find-references] and
`xref-find-apropos' find definitions and uses across the project
root with the lisp-find tool, without a running Lisp.  Another
buffer-local backend, such as SLIME's or SLY's when connected, comes
first unless `lisp-read-file-xref-first' is non-nil.

\\{lisp-read-file-mode-map}"
  :lighter " LRF"
  :keymap lisp-read-file-mode-map
  (if lisp-read-file-mode
      (add-hook 'xref-backend-functions #'lisp-read-file-xref-backend
                (if lisp-read-file-xref-first -90 0) t)
    (remove-hook 'xref-backend-functions #'lisp-read-file-xref-backend t))
  (if lisp-read-file-mode
      (unless (eq imenu-create-index-function
                  #'lisp-read-file-imenu-create-index)
        (setq lisp-read-file--saved-imenu-function
              (cons (local-variable-p 'imenu-create-index-function)
                    imenu-create-index-function))
        (setq-local imenu-create-index-function
                    #'lisp-read-file-imenu-create-index))
    (when (and lisp-read-file--saved-imenu-function
               (eq imenu-create-index-function
                   #'lisp-read-file-imenu-create-index))
      (if (car lisp-read-file--saved-imenu-function)
          (setq-local imenu-create-index-function
                      (cdr lisp-read-file--saved-imenu-function))
        (kill-local-variable 'imenu-create-index-function)))
    (setq lisp-read-file--saved-imenu-function nil))
  (lisp-read-file--keep-spaces-in-imenu lisp-read-file-mode)
  ;; Forget the index imenu built with the other function.
  (setq imenu--index-alist nil))

(defun lisp-read-file--keep-spaces-in-imenu (on)
  "With ON, let `imenu' show names with their spaces; else restore its setting.
Method names hold spaces, \"area :around (shape)\", which imenu's
completion would show with `imenu-space-replacement' instead."
  (cond
   ((and on (not lisp-read-file--saved-space-replacement))
    (setq lisp-read-file--saved-space-replacement
          (cons (local-variable-p 'imenu-space-replacement) imenu-space-replacement))
    (setq-local imenu-space-replacement nil))
   ((and (not on) lisp-read-file--saved-space-replacement)
    (if (car lisp-read-file--saved-space-replacement)
        (setq-local imenu-space-replacement
                    (cdr lisp-read-file--saved-space-replacement))
      (kill-local-variable 'imenu-space-replacement))
    (setq lisp-read-file--saved-space-replacement nil))))

(provide 'lisp-read-file)
;;; lisp-read-file.el ends here
