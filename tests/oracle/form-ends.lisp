;;;; tests/oracle/form-ends.lisp — SBCL oracle for top-level form boundaries.
;;;;
;;;; Usage:  sbcl --script tests/oracle/form-ends.lisp < list-of-paths
;;;;
;;;; stdin: one absolute path per line.  For each path, exactly one line on stdout:
;;;;
;;;;   OK<TAB>path<TAB>end1 end2 ...      byte end offsets (exclusive) of every top-level form
;;;;   FAIL<TAB>path<TAB>reason           condition type, message and byte position
;;;;
;;;; The file is read with SBCL's own reader: standard readtable, *READ-SUPPRESS* T,
;;;; *READ-EVAL* NIL, a fresh scratch package, nothing from the file is ever evaluated.
;;;; READ-PRESERVING-WHITESPACE leaves the stream just after each form's last character,
;;;; and FILE-POSITION on a UTF-8 character stream is a BYTE offset, so each position
;;;; after a read is the byte end of one top-level form.  Comments are consumed by the
;;;; reader (zero-value reader macros), so only END offsets are produced; that is what the
;;;; Rust test (tests/reader/sbcl_oracle.rs) compares against `lisp-read-file outline --json`.
;;;;
;;;; Differences from plain SBCL READ that are deliberate (see docs/reader.md):
;;;;
;;;;  #+ / #-  We install our own dispatch functions: they read the feature expression
;;;;           and the following form, both suppressed, and return ONE value (NIL),
;;;;           whatever the feature's truth.  SBCL's own #+/#- return zero values for a
;;;;           false feature, which makes READ continue and glue the next form on.
;;;;           So `#+(or) #+(or) a b c` is two forms: `#+(or) #+(or) a b` and `c`.
;;;;
;;;;  NORMALISATION (a), leading BOM: a U+FEFF as the very first character of the file
;;;;           is skipped (the spec's guard skips a UTF-8 BOM); SBCL would otherwise read
;;;;           it as a constituent character, i.e. as (part of) a symbol.  See SKIP-BOM.
;;;;
;;;;  NORMALISATION (b), extended package prefix: SBCL reads `pkg::(form ...)`,
;;;;           `pkg:(form)` and `pkg::` then blank space or comments and a datum
;;;;           (SBCL's own `sb-kernel::` on a line before a form) as one datum when not
;;;;           suppressing, but with *READ-SUPPRESS* it returns the token `pkg::` and
;;;;           the datum as TWO reads.  We read one datum, as SBCL does without
;;;;           suppression (docs/reader.md).  Rule: when the text of a read ends in `:`
;;;;           (not an escaped `\:`, e.g. the character `#\:`), drop that end and keep
;;;;           the next read's end.  See MERGE-WITH-NEXT-P.
;;;;
;;;;  NORMALISATION (c), comma outside backquote: with *READ-SUPPRESS*, SBCL's comma
;;;;           reader outside a backquote consumes only the `,` and returns, so `,a` or
;;;;           `,@a` at top level gives two reads (`,` then `a` / `@a`).  Our spec says
;;;;           a comma outside a backquote is still a prefix of the datum after it.
;;;;           Rule: when the text of a read ends in `,` (not the character `#\,`),
;;;;           drop that end and keep the next read's end.  See MERGE-WITH-NEXT-P.
;;;;
;;;;  NORMALISATION (d), shebang line: a file whose first two characters (after a BOM)
;;;;           are `#!` starts with a shebang line; it is skipped through its newline,
;;;;           exactly as SBCL's own LOAD does (SB-FASL::MAYBE-SKIP-SHEBANG-LINE).  Our
;;;;           spec makes that line a `shebang` item, not a form.  READ alone would treat
;;;;           `#!` as an undefined dispatch macro and read the rest of the line as forms.
;;;;           See SKIP-SHEBANG.
;;;;
;;;; How often each normalisation fired is printed on stderr at the end of the run.

(setf *invoke-debugger-hook* nil)

;;; `sbcl --script` implies the runtime option --lose-on-corruption, under which a
;;; control stack exhaustion (e.g. a file with a million nested parens: SBCL's reader
;;; recurses on list depth) kills the whole process instead of signalling
;;; SB-KERNEL::CONTROL-STACK-EXHAUSTED.  Turn that off so one deep file becomes one FAIL
;;; line.  (SBCL then prints "INFO: Control stack guard page ..." on stderr; harmless.)
(setf (sb-alien:extern-alien "lose_on_corruption_p" sb-alien:int) 0)

;;; ------------------------------------------------------------------------------------
;;; I/O: our own UTF-8 streams on fd 0 and 1, independent of the locale.  Nothing but
;;; result lines ever goes to OUT; warnings are muffled, diagnostics go to stderr.

(defvar *in* (sb-sys:make-fd-stream 0 :input t :external-format :utf-8
                                      :buffering :full :element-type 'character))
(defvar *out* (sb-sys:make-fd-stream 1 :output t :external-format :utf-8
                                       :buffering :full :element-type 'character))

;;; ------------------------------------------------------------------------------------
;;; Readtable and package.

(defpackage "LRF-ORACLE-SCRATCH" (:use))

(defun read-feature-and-form (stream sub-char arg)
  "#+ / #- : consume the feature expression and the next form as one item, return NIL."
  (declare (ignore sub-char arg))
  (let ((*read-suppress* t))
    (read stream t nil t)               ; feature expression
    (read stream t nil t))              ; the conditionalized form
  nil)

(defvar *oracle-readtable*
  (let ((rt (copy-readtable nil)))
    (set-dispatch-macro-character #\# #\+ #'read-feature-and-form rt)
    (set-dispatch-macro-character #\# #\- #'read-feature-and-form rt)
    rt))

;;; ------------------------------------------------------------------------------------
;;; Normalisations (see the header).

(defvar *normalisations* (list :bom 0 :package-prefix 0 :comma 0 :shebang 0))

(defun skip-bom (stream)
  "NORMALISATION (a): skip a U+FEFF that is the first character of the file."
  (let ((c (peek-char nil stream nil nil)))
    (when (and c (char= c (code-char #xFEFF)))
      (incf (getf *normalisations* :bom))
      (read-char stream))))

(defun skip-shebang (stream)
  "NORMALISATION (d): skip a first line that starts with `#!`, as SBCL's LOAD does."
  (let ((c (read-char stream nil nil)))
    (cond ((null c))
          ((and (char= c #\#) (eql (peek-char nil stream nil nil) #\!))
           (incf (getf *normalisations* :shebang))
           (read-line stream nil nil))
          (t (unread-char c stream)))))

(defun merge-with-next-p (bytes end)
  "NORMALISATION (b) and (c): should the read that ended at byte END be merged with
the following read?  BYTES is the file's raw content."
  (let ((n (length bytes)))
    (flet ((byte-at (i) (if (< -1 i n) (aref bytes i) -1)))
      (let ((last (byte-at (1- end)))
            (before-last (byte-at (- end 2))))
        (and (/= before-last (char-code #\\))       ; not `#\:`, `#\,`, `foo\:`
             (cond
               ;; (b) `pkg::` or `pkg:` followed by a datum
               ((= last (char-code #\:))
                (incf (getf *normalisations* :package-prefix)))
               ;; (c) a lone comma outside backquote: `,` then the datum
               ((= last (char-code #\,))
                (incf (getf *normalisations* :comma)))))))))

;;; ------------------------------------------------------------------------------------

(defun one-line (string)
  (substitute-if #\Space (lambda (c) (member c '(#\Newline #\Return #\Tab #\Page
                                                  #\Linefeed)))
                 string))

(defun strip-identities (string)
  "Remove SBCL's object identity suffixes like ` {1001CB6793}` so output is deterministic."
  (with-output-to-string (out)
    (let ((i 0) (n (length string)))
      (loop while (< i n)
            do (let ((close (and (char= (char string i) #\Space)
                                 (< (1+ i) n)
                                 (char= (char string (1+ i)) #\{)
                                 (position #\} string :start i))))
                 (if (and close
                          (> close (+ i 2))
                          (every (lambda (c) (digit-char-p c 16))
                                 (subseq string (+ i 2) close)))
                     (setf i (1+ close))
                     (progn (write-char (char string i) out) (incf i))))))))

(defun condition-text (c)
  (strip-identities
   (one-line (format nil "~a: ~a"
                     (type-of c)
                     (or (ignore-errors (princ-to-string c)) "<unprintable condition>")))))

(defun failure (c pos)
  (if pos
      (format nil "~a at byte ~d" (condition-text c) pos)
      (condition-text c)))

(defun file-bytes (path)
  (with-open-file (s path :element-type '(unsigned-byte 8))
    (let* ((v (make-array (file-length s) :element-type '(unsigned-byte 8)))
           (n (read-sequence v s)))
      (if (= n (length v)) v (subseq v 0 n)))))

(defun form-ends (path)
  "Return (values :ok ends) or (values :fail reason)."
  (let ((pos nil))
    (handler-case
        (let* ((pathname (sb-ext:parse-native-namestring path))
               (bytes (file-bytes pathname))
               (ends '())
               (pending nil)            ; end of a read merged into the next one
               (eof (list :eof)))
          (with-open-file (stream pathname
                                  :element-type 'character
                                  :external-format '(:utf-8 :replacement #\?))
            (let ((*readtable* *oracle-readtable*)
                  (*package* (find-package "LRF-ORACLE-SCRATCH"))
                  (*read-eval* nil)
                  (*read-suppress* t)
                  (*read-base* 10)
                  (*read-default-float-format* 'single-float))
              (skip-bom stream)
              (skip-shebang stream)
              (setf pos (file-position stream))
              (handler-bind ((error (lambda (c)
                                      (declare (ignore c))
                                      ;; remember where we were while the stream is open
                                      (setf pos (ignore-errors (file-position stream)))))
                             (storage-condition
                               (lambda (c)
                                 (declare (ignore c))
                                 (setf pos (ignore-errors (file-position stream))))))
                (loop
                  (let ((x (read-preserving-whitespace stream nil eof)))
                    (when (eq x eof)
                      ;; a merge-pending read at end of file still ends a form
                      (when pending (push pending ends))
                      (return))
                    (let ((end (file-position stream)))
                      (setf pos end)
                      (cond ((merge-with-next-p bytes end)
                             (setf pending end))
                            (t
                             (setf pending nil)
                             (push end ends)))))))))
          (values :ok (nreverse ends)))
      (storage-condition (c) (values :fail (failure c pos)))
      (error (c) (values :fail (failure c pos))))))

(defun main ()
  (handler-bind ((warning #'muffle-warning))
    (loop for path = (read-line *in* nil nil)
          for count from 1
          while path
          do (let ((path (string-right-trim '(#\Return) path)))
               (when (plusp (length path))
                 (multiple-value-bind (status data) (form-ends path)
                   (if (eq status :ok)
                       (format *out* "OK~c~a~c~{~d~^ ~}~%" #\Tab path #\Tab data)
                       (format *out* "FAIL~c~a~c~a~%" #\Tab path #\Tab (one-line data))))
                 (when (zerop (mod count 16))
                   (finish-output *out*))))))
  (finish-output *out*)
  (format *error-output* "~&form-ends: normalisations applied: ~{~(~a~) ~d~^, ~}~%"
          *normalisations*)
  (finish-output *error-output*))

(main)
