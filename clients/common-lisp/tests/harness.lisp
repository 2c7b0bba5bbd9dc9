;;;; harness.lisp -- a small test harness: DEFTEST, CHECK, RUN-TESTS

(defpackage #:lisp-read-file/tests
  (:use #:cl)
  (:export #:run-tests))

(in-package #:lisp-read-file/tests)

(defvar *tests* '()
  "The tests, as (NAME . FUNCTION), most recently defined first.")

(defvar *checks* 0
  "Checks made by the running test.")

(defvar *failures* '()
  "Descriptions of the failed checks of the running test.")

(defmacro deftest (name &body body)
  "Define the test NAME: BODY runs in RUN-TESTS, its CHECKs counted."
  `(progn
     (setf *tests* (cons (cons ',name (lambda () ,@body))
                         (remove ',name *tests* :key #'car)))
     ',name))

(defun record (passed description)
  "Count a check; note DESCRIPTION when it did not pass. Returns PASSED."
  (incf *checks*)
  (unless passed
    (push description *failures*))
  passed)

(defmacro check (form &optional (description (format nil "~S" form)))
  "Check that FORM is true."
  `(record ,form ,description))

(defmacro check-equal (expected form &optional description)
  "Check that FORM is EQUAL to EXPECTED; DESCRIPTION says what that means."
  (let ((value (gensym "VALUE")) (wanted (gensym "EXPECTED")))
    `(let ((,value ,form) (,wanted ,expected))
       (record (equal ,wanted ,value)
               (format nil "~@[~A: ~]~S: expected ~S, got ~S"
                       ,description ',form ,wanted ,value)))))

(defmacro check-signals (type form)
  "Check that FORM signals a condition of TYPE; return the condition."
  (let ((condition (gensym "CONDITION")))
    `(let ((,condition (handler-case (progn ,form nil)
                         (,type (c) c))))
       (record ,condition (format nil "~S did not signal ~S" ',form ',type))
       ,condition)))

(defun run-test (name function)
  "Run one test; print PASS or FAIL with its failed checks. Returns whether it passed.
A test that makes no check fails: it could not have failed."
  (let ((*checks* 0) (*failures* '()))
    (handler-case (funcall function)
      (error (condition)
        (push (format nil "unexpected ~S: ~A" (type-of condition) condition) *failures*)))
    (when (zerop *checks*)
      (push "no check was made" *failures*))
    (format t "~:[FAIL~;PASS~] ~(~A~) (~D check~:P)~%" (null *failures*) name *checks*)
    (dolist (failure (reverse *failures*))
      (format t "    ~A~%" failure))
    (finish-output)
    (null *failures*)))

(defun run-tests ()
  "Run every test in definition order; print a summary line `N tests, M failed`.
Returns T when all passed."
  (let* ((tests (reverse *tests*))
         (failed (loop for (name . function) in tests
                       count (not (run-test name function)))))
    (format t "~D tests, ~D failed~%" (length tests) failed)
    (finish-output)
    (zerop failed)))
