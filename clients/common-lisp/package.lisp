;;;; package.lisp -- the LISP-READ-FILE package

(defpackage #:lisp-read-file
  (:use #:cl)
  ;; The condition class of tool errors is LISP-READ-FILE:READER-ERROR, named after the
  ;; reader (this program), not CL's READER-ERROR (a parse error of the Lisp reader).
  ;; Refer to it with the package prefix; a package that uses both CL and this one
  ;; needs (:shadowing-import-from #:lisp-read-file #:reader-error).
  (:shadow #:reader-error)
  (:export
   ;; Reading
   #:read-file
   #:outline
   #:lisp-read-file
   ;; Searching a project
   #:lisp-find
   ;; Configuration
   #:*program*
   #:*root*
   #:*transport*
   #:*timeout*
   #:*extra-arguments*
   ;; The child processes
   #:server-pid
   #:shutdown
   ;; Conditions
   #:reader-error
   #:reader-error-code
   #:reader-error-path
   #:reader-error-message
   #:configuration-error
   #:configuration-error-variable
   #:configuration-error-value
   #:configuration-error-expected
   #:program-not-found
   #:program-not-found-program
   #:program-not-found-variable
   #:server-failure
   #:server-failure-roots
   #:server-failure-message
   #:server-timeout
   #:server-timeout-seconds)
  (:documentation "A client of the lisp-read-file program: READ-FILE (the tool's views as
Lisp data), OUTLINE (the items of a Lisp file), LISP-FIND (definitions and references
across a project), and LISP-READ-FILE, a drop-in for the
function of the same name in cl-mcp. Every read goes through the program, which
reads files without evaluating them."))
