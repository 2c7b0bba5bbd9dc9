;;;; tests/oracle/sbcl-callers.lisp -- what SBCL itself records as the callers of a
;;;; system's functions and macros, for tests/project/callers_oracle.rs.
;;;;
;;;; sbcl --non-interactive --no-userinit --load tests/oracle/sbcl-callers.lisp \
;;;;      --eval '(oracle-callers:run "OUT" (list "cl-ppcre" "alexandria" ...))'
;;;;
;;;; Loading and locating are tests/oracle/sbcl-definitions.lisp's (loaded first). Each
;;;; system is loaded with ASDF (dependencies first); then for every symbol of every
;;;; package that appeared while loading it that names a function or a macro, SBCL's
;;;; cross-reference data is asked who calls it (`sb-introspect:who-calls`) or who
;;;; expands it (`sb-introspect:who-macroexpands`); each caller whose source lies in the
;;;; system's own directory is written, one line each (tab-separated):
;;;;
;;;;   SYSTEM <name> <source-directory>
;;;;   FEATURES <feature> ...
;;;;   FAIL <name> <reason>
;;;;   CALL <how> <callee-package> <callee> <caller> <file> <form> <line>
;;;;
;;;; <how> is `call` or `macro`; <callee> is the symbol's name, lowercased; <caller> SBCL's
;;;; name of the calling function, printed; <form> the 0-based index of the top-level
;;;; form (-1 when not recorded), <line> the 1-based line of the recorded character
;;;; offset (0 when none).

(load (merge-pathnames "sbcl-definitions.lisp" *load-truename*))

(defpackage :oracle-callers (:use :cl) (:export #:run))
(in-package :oracle-callers)

(defun one-line (thing)
  (substitute #\Space #\Tab
              (substitute #\Space #\Newline
                          (let ((*package* (find-package :keyword)))
                            (prin1-to-string thing)))))

(defun callers (out packages directory)
  (dolist (s (oracle::symbols-of packages))
    (let ((how (cond ((macro-function s) "macro")
                     ((fboundp s) "call"))))
      (when how
        (dolist (entry (ignore-errors
                        (if (string= how "macro")
                            (sb-introspect:who-macroexpands s)
                            (sb-introspect:who-calls s))))
          (multiple-value-bind (file form line)
              (oracle::location (cdr entry) directory)
            (when file
              (format out "CALL~c~a~c~a~c~a~c~a~c~a~c~d~c~d~%"
                      #\Tab how #\Tab (oracle::package-of s) #\Tab
                      (string-downcase (symbol-name s)) #\Tab (one-line (car entry))
                      #\Tab file #\Tab form #\Tab line))))))))

(defun run-one (out name)
  (let ((system (ignore-errors (asdf:find-system name nil))))
    (unless system
      (format out "FAIL~c~a~cno such system~%" #\Tab name #\Tab)
      (return-from run-one))
    (let* ((directory (namestring (truename (asdf:system-source-directory system))))
           (before (list-all-packages)))
      (handler-case
          (progn
            (dolist (d (asdf:system-depends-on system))
              (when (stringp d) (oracle::load-quietly d)))
            (setf before (list-all-packages))
            (oracle::load-quietly name))
        (error (e)
          (format out "FAIL~c~a~c~a~%" #\Tab name #\Tab
                  (substitute #\Space #\Newline (princ-to-string e)))
          (return-from run-one)))
      (format out "SYSTEM~c~a~c~a~%" #\Tab name #\Tab directory)
      (oracle::print-features out)
      (callers out (set-difference (list-all-packages) before) directory))))

(defun run (output systems)
  (with-open-file (out output :direction :output :if-exists :supersede
                              :external-format :utf-8)
    (dolist (name systems)
      (run-one out name)
      (finish-output out))))
