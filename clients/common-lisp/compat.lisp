;;;; compat.lisp -- LISP-READ-FILE, a drop-in for cl-mcp's function of that name

(in-package #:lisp-read-file)

;;; cl-mcp (https://github.com/cl-ai-project/cl-mcp), the most used Common Lisp MCP
;;; server, reads Lisp files with its own function CL-MCP/SRC/LISP-READ-FILE:LISP-READ-FILE
;;; (src/lisp-read-file.lisp, matched at commit 414d504b5db805d41859d501dbabeb1d999d9709).
;;; The function below has its lambda list and returns its hash table, with the same
;;; keys, modes and meta keys for the same call, so that such a server can call ours
;;; instead. What it does with each argument follows cl-mcp, not READ-FILE: the
;;; collapsed view is never paged, OFFSET and LIMIT page raw lines (LIMIT 500 by
;;; default), and patterns do nothing in raw mode.

(defparameter *compat-default-limit* 500
  "The default LIMIT of cl-mcp's lisp-read-file: lines of a raw or text view.")

(defparameter *whole-view-limit* (1- (expt 2 53))
  "A LIMIT no file reaches: cl-mcp's collapsed view is never cut.")

(defparameter *lisp-source-types* '("lisp" "lsp" "cl" "asd" "ros")
  "The file types both programs read as Lisp source.")

(defun lisp-source-p (path)
  "Whether PATH (a string) names a Lisp source file by its type, ignoring case."
  (let* ((name (subseq path (1+ (or (position #\/ path :from-end t) -1))))
         (dot (position #\. name :from-end t)))
    (and dot (plusp dot)
         (member (subseq name (1+ dot)) *lisp-source-types* :test #'string-equal)
         t)))

(defun check-compat-arguments (path collapsed include-comments comment-context offset
                               limit)
  "Refuse, as cl-mcp does, the arguments its lisp-read-file refuses: here as
READER-ERROR INVALID_ARGUMENT."
  (unless (stringp path)
    (invalid-argument nil "path must be a string"))
  (when (zerop (length path))
    (invalid-argument path "path must not be empty"))
  (unless (member collapsed '(t nil))
    (invalid-argument path "collapsed must be boolean"))
  (unless (member include-comments '(t nil))
    (invalid-argument path "include-comments must be boolean"))
  (unless (member comment-context '("preceding" "all" "none") :test #'equal)
    (invalid-argument path "comment-context must be \"preceding\", \"all\", or \"none\""))
  (unless (or (null offset) (typep offset '(integer 0)))
    (invalid-argument path "offset must be a non-negative integer when provided"))
  (unless (or (null limit) (typep limit '(integer 1)))
    (invalid-argument path "limit must be a positive integer when provided")))

(defun hash (&rest keys-and-values)
  "An EQUAL hash table of alternating KEYS-AND-VALUES, the shape cl-mcp returns."
  (let ((table (make-hash-table :test #'equal)))
    (loop for (key value) on keys-and-values by #'cddr
          do (setf (gethash key table) value))
    table))

(defun payload (result mode meta)
  "The hash table cl-mcp's lisp-read-file returns for READ-FILE's RESULT."
  (hash "content" (getf result :content)
        "path" (getf result :path)
        "mode" mode
        "meta" meta))

(defun line-stats (text)
  "Comment lines and blank lines of TEXT, the raw view of a file, counted as cl-mcp
counts them: a comment line starts, after blanks, with ; or #| or |#. The view's notes
(lines in brackets) are neither."
  (let ((comment 0) (blank 0))
    (with-input-from-string (stream text)
      (loop for line = (read-line stream nil nil)
            while line
            do (let ((trimmed (string-trim '(#\Space #\Tab #\Return #\Newline) line)))
                 (cond ((string= trimmed "") (incf blank))
                       ((or (char= (char trimmed 0) #\;)
                            (eql 0 (search "#|" trimmed))
                            (eql 0 (search "|#" trimmed)))
                        (incf comment))))))
    (values comment blank)))

(defun compat-collapsed (path name-pattern content-pattern comments)
  "cl-mcp's lisp-collapsed result: the whole collapsed view, with the line counts of
the file that cl-mcp's meta holds (read as raw lines, a second call)."
  (let* ((result (read-file path :name-pattern name-pattern :content-pattern content-pattern
                                 :comments comments :limit *whole-view-limit*))
         (meta (getf result :meta))
         (total-lines (getf meta :total-lines))
         ;; null when the file is over the size cap (the view is then a note).
         (total-lines (if (integerp total-lines) total-lines 0))
         (text (if (plusp total-lines)
                   (getf (read-file path :collapsed nil :limit total-lines) :content)
                   "")))
    (multiple-value-bind (comment blank) (line-stats text)
      (payload result "lisp-collapsed"
               (hash "total_forms" (getf meta :total-forms)
                     "expanded_forms" (getf meta :expanded-forms)
                     "comment_lines" comment
                     "blank_lines" blank
                     ;; cl-mcp's source_lines are all lines, as total_lines.
                     "source_lines" total-lines)))))

(defun compat-lines (path offset limit mode)
  "cl-mcp's raw or text-snippet result (MODE): a window of raw lines."
  (let* ((result (read-file path :collapsed nil :offset offset
                                 :limit (or limit *compat-default-limit*)))
         (meta (getf result :meta)))
    (payload result mode (hash "truncated" (and (getf meta :truncated) t)
                               "total_lines" (getf meta :total-lines)))))

(defun compat-text-filtered (path content-pattern limit)
  "cl-mcp's text-filtered result: the lines of a text file around CONTENT-PATTERN."
  (let ((result (read-file path :content-pattern content-pattern
                                :limit (or limit *compat-default-limit*))))
    (payload result "text-filtered"
             (hash "truncated" (and (getf (getf result :meta) :truncated) t)))))

(defun lisp-read-file (path &key (collapsed t) name-pattern content-pattern offset limit
                            (include-comments nil) (comment-context "preceding") readtable)
  "Read PATH with Lisp-aware collapsed formatting, as cl-mcp's LISP-READ-FILE does, through
the lisp-read-file program; the same lambda list and result, for a one-line swap.

When COLLAPSED is true and PATH is Lisp source, the collapsed view of the whole file,
NAME-PATTERN or CONTENT-PATTERN expanding matching forms and INCLUDE-COMMENTS keeping
comments by COMMENT-CONTEXT (\"preceding\", \"all\" or \"none\"); mode
\"lisp-collapsed\", meta total_forms, expanded_forms, comment_lines, blank_lines,
source_lines. When COLLAPSED is false, LIMIT (default 500) lines from OFFSET; mode
\"raw\", meta truncated and total_lines. A text file with CONTENT-PATTERN is grepped
with context (\"text-filtered\", meta truncated); without, a window of lines
(\"text-snippet\", meta truncated and total_lines). READTABLE is accepted and ignored:
the program reads reader macros without evaluating anything.

Returns an EQUAL hash table with keys \"content\", \"path\", \"mode\" and \"meta\" (an
EQUAL hash table). Patterns use Rust regex syntax. Errors are READER-ERROR conditions."
  (declare (ignore readtable))
  (check-compat-arguments path collapsed include-comments comment-context offset limit)
  ;; cl-mcp treats an empty pattern as no pattern.
  (let ((name-pattern (non-empty name-pattern))
        (content-pattern (non-empty content-pattern))
        ;; Its answers go to cl-mcp's callers, who pass JSON arguments (offset=2).
        (*hint-style* "arguments"))
    (compat-read path collapsed name-pattern content-pattern offset limit
                 (if include-comments comment-context "none"))))

(defun non-empty (pattern)
  "PATTERN when it is a non-empty string, else NIL."
  (and (stringp pattern) (plusp (length pattern)) pattern))

(defun compat-read (path collapsed name-pattern content-pattern offset limit comments)
  "The result of LISP-READ-FILE for its checked arguments: the view cl-mcp chooses."
  (cond ((and collapsed (lisp-source-p path))
         (compat-collapsed path name-pattern content-pattern comments))
        ((not collapsed) (compat-lines path offset limit "raw"))
        (content-pattern (compat-text-filtered path content-pattern limit))
        (t (compat-lines path offset limit "text-snippet"))))
