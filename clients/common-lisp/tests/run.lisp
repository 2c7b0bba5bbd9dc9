;;;; run.lisp -- load the client and run its tests in a fresh image:
;;;;   LISP_READ_FILE_BIN=target/release/lisp-read-file \
;;;;     sbcl --non-interactive --no-userinit --load clients/common-lisp/tests/run.lisp
;;;; or, in ECL, ecl --norc --eval '(require :asdf)' --load clients/common-lisp/tests/run.lisp
;;;; Exits with 0 when every test passed, 1 otherwise (also for a compiler warning).

(require :asdf)

;;; Debian's cl-* packages live in /usr/share/common-lisp/source/, which ASDF's default
;;; source registry already searches. This directory's parent holds lisp-read-file.asd.
(asdf:initialize-source-registry
 `(:source-registry
   (:directory ,(uiop:pathname-parent-directory-pathname
                 (uiop:pathname-directory-pathname *load-truename*)))
   :inherit-configuration))

(defun load-without-warnings (system)
  "Compile and load SYSTEM afresh; return the warnings the compiler gave, style
warnings included."
  (let ((warnings '()))
    (handler-bind ((warning (lambda (warning)
                              ;; Forcing a compilation reloads the .asd and loads each
                              ;; macro again after the compiler defined it: SBCL notes
                              ;; these redefinitions, which are not faults of the code.
                              (unless (search "REDEFINITION" (symbol-name (type-of warning)))
                                (push warning warnings)))))
      (asdf:load-system system :force t))
    (reverse warnings)))

(asdf:load-system "yason")
(asdf:load-system "bordeaux-threads")
(let ((warnings (append (load-without-warnings "lisp-read-file")
                        (load-without-warnings "lisp-read-file/tests"))))
  (dolist (warning warnings)
    (format t "WARNING ~S: ~A~%" (type-of warning) warning))
  (let ((passed (uiop:symbol-call '#:lisp-read-file/tests '#:run-tests)))
    (uiop:symbol-call '#:lisp-read-file '#:shutdown)
    (when warnings
      (format t "~D compiler warning~:P~%" (length warnings)))
    (uiop:quit (if (and passed (null warnings)) 0 1))))
