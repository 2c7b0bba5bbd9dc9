;;;; conditions.lisp -- what the client signals

(in-package #:lisp-read-file)

(define-condition reader-error (error)
  ((code :initarg :code :reader reader-error-code
         :documentation "The program's error code, a string such as \"NOT_FOUND\",
\"ACCESS_DENIED\" or \"INVALID_ARGUMENT\" (see docs/errors.md).")
   (path :initarg :path :initform nil :reader reader-error-path
         :documentation "The path as the program names it (relative to the root), or NIL.")
   (message :initarg :message :reader reader-error-message
            :documentation "The program's message; it ends with what to do next."))
  (:report (lambda (condition stream)
             (format stream "~A: ~A"
                     (reader-error-code condition) (reader-error-message condition))))
  (:documentation "A failure of a read: a missing file, a path outside the roots, a bad
argument or pattern... Every tool error of the program is one of these, with its code."))

(define-condition configuration-error (error)
  ((variable :initarg :variable :reader configuration-error-variable
             :documentation "The special variable whose value is wrong, such as
LISP-READ-FILE:*TIMEOUT*.")
   (value :initarg :value :initform nil :reader configuration-error-value
          :documentation "Its value at the time of the call.")
   (expected :initarg :expected :initform nil :reader configuration-error-expected
             :documentation "What the variable accepts, in words."))
  (:report (lambda (condition stream)
             (format stream "~A is ~S; it must be ~A."
                     (qualified-name (configuration-error-variable condition))
                     (configuration-error-value condition)
                     (configuration-error-expected condition))))
  (:documentation "A configuration variable of the client (*TRANSPORT*, *TIMEOUT*,
*EXTRA-ARGUMENTS*, *PROGRAM*) has a value it does not accept. Signalled before anything
is sent or run."))

(define-condition program-not-found (configuration-error)
  ((program :initarg :program :reader program-not-found-program
            :documentation "The value of *PROGRAM* that named no executable file.")
   (variable :initform '*program* :reader program-not-found-variable
             :documentation "The variable that sets the program: LISP-READ-FILE:*PROGRAM*."))
  (:report (lambda (condition stream)
             (format stream "Cannot find the lisp-read-file program ~S. Build it (cargo ~
                             build --release) and set ~A to its file name, or put it on ~
                             PATH."
                     (program-not-found-program condition)
                     (qualified-name (program-not-found-variable condition)))))
  (:documentation "The program to run is not an executable file, nor found on PATH. A
CONFIGURATION-ERROR of *PROGRAM*."))

(define-condition server-failure (error)
  ((roots :initarg :roots :initform nil :reader server-failure-roots
          :documentation "The roots of the child process (directory names).")
   (message :initarg :message :reader server-failure-message
            :documentation "What went wrong, with the end of the child's standard error."))
  (:report (lambda (condition stream)
             (format stream "lisp-read-file~@[ (root ~{~A~^, ~})~]: ~A"
                     (server-failure-roots condition)
                     (server-failure-message condition))))
  (:documentation "The program could not be run or did not answer as it should: it could
not start, it died twice in one call, it answered with a protocol error."))

(define-condition server-timeout (server-failure)
  ((seconds :initarg :seconds :reader server-timeout-seconds
            :documentation "The timeout that passed, *TIMEOUT* at the time of the call."))
  (:documentation "The program did not answer within *TIMEOUT* seconds. The child process
was stopped; the next call starts a new one."))

(defun qualified-name (symbol)
  "SYMBOL's name with its package prefix, as a user types it: LISP-READ-FILE:*PROGRAM*."
  (let ((*package* (find-package '#:keyword)))
    (prin1-to-string symbol)))

(defun configuration-error (variable expected)
  "Signal CONFIGURATION-ERROR: VARIABLE's value is not what it accepts, EXPECTED."
  (error 'configuration-error :variable variable :value (symbol-value variable)
                              :expected expected))

(defun invalid-argument (path format-control &rest format-arguments)
  "Signal the READER-ERROR INVALID_ARGUMENT for a bad argument caught before any call."
  (error 'reader-error :code "INVALID_ARGUMENT" :path path
                       :message (apply #'format nil format-control format-arguments)))
