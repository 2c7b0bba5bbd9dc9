;;;; grammar/definers.lisp -- how each defining operator is collapsed (docs/reader.md#definer-table).
;;;;
;;;; Read with the `lexpr` crate and embedded in the binary. Users extend or override it
;;;; with a file of the same shape: `--definers FILE`, or `.lisp-read-file.lisp` at a
;;;; project root. A later entry for the same operator replaces an earlier one.
;;;;
;;;; Each entry is (OPERATOR KEY VALUE ...). OPERATOR matches the form's operator by
;;;; symbol name, case-insensitively, ignoring any package prefix (cl:defun, ASDF:DEFSYSTEM).
;;;; Positions N count the form's elements, the operator being element 0.
;;;;
;;;;   :name N            the element that holds the name (default 1)
;;;;   :name-in-list t    when that element is a list, its first element is the name
;;;;                      (defstruct (point (:conc-name p-)) ...)
;;;;   :lambda-list N     an element shown as written, however long
;;;;   :qualifiers t      defmethod: atoms after the name are qualifiers, the first list is
;;;;                      the specialized lambda list; the body follows it
;;;;   :superclasses N    an element shown as written
;;;;   :slots N           a list of slot specifiers, shown as the slot names
;;;;   :slots-from N      slot specifiers from N on, shown as names (a leading string is
;;;;                      the docstring)
;;;;   :value N           shown when it is one line of at most 60 characters
;;;;   :shown (N ...)     elements shown as written, abbreviated past 60 characters
;;;;   :keywords (K ...)  keyword arguments shown with their values (:depends-on (...))
;;;;   :body N            body forms from N: after any declarations, a string followed by
;;;;                      more forms is the docstring (a lone string is the return value)
;;;;   :doc N             the string at element N is the docstring
;;;;   :options N         options from N: (:documentation "...") gives the docstring
;;;;   :doc-keyword K     the keyword argument whose string value is the docstring
;;;;   :whole t           the form is shown whole (in-package)
;;;;   :container N       elements from N are forms, outlined as children

;;; Functions and macros
(defun                     :name 1 :lambda-list 2 :body 3)
(defmacro                  :name 1 :lambda-list 2 :body 3)
(defgeneric                :name 1 :lambda-list 2 :options 3)
(defmethod                 :name 1 :qualifiers t)
(define-compiler-macro     :name 1 :lambda-list 2 :body 3)
(define-modify-macro       :name 1 :lambda-list 2 :shown (3) :doc 4)
(define-setf-expander      :name 1 :lambda-list 2 :body 3)
(defsetf                   :name 1 :lambda-list 2 :doc 3 :body 4)
(define-method-combination :name 1 :lambda-list 2 :doc-keyword :documentation :body 4)

;;; Types, classes, structures
(defclass                  :name 1 :superclasses 2 :slots 3 :options 4)
(define-condition          :name 1 :superclasses 2 :slots 3 :options 4)
(defstruct                 :name 1 :name-in-list t :slots-from 2)
(deftype                   :name 1 :lambda-list 2 :body 3)

;;; Variables and constants
(defvar                    :name 1 :value 2 :doc 3)
(defparameter              :name 1 :value 2 :doc 3)
(defconstant               :name 1 :value 2 :doc 3)
(define-symbol-macro       :name 1 :value 2)
(defglobal                 :name 1 :value 2 :doc 3)
(define-load-time-global   :name 1 :value 2 :doc 3)
(define-constant           :name 1 :value 2 :doc-keyword :documentation)

;;; Packages, readtables, systems, tests
(defpackage                :name 1 :options 2)
(define-package            :name 1 :options 2)
(in-package                :whole t)
(in-readtable              :whole t)
(defreadtable              :name 1)
(defsystem                 :name 1 :keywords (:depends-on) :doc-keyword :description)
(deftest                   :name 1)

;;; Containers: their children are top-level forms too
(progn                     :container 1)
(eval-when                 :shown (1) :container 2)
(locally                   :container 1)
(macrolet                  :shown (1) :container 2)
(symbol-macrolet           :shown (1) :container 2)
(let                       :shown (1) :container 2)
(let*                      :shown (1) :container 2)
