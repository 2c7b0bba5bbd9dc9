;;;; grammar/definers.lisp -- how each defining operator is collapsed (docs/reader.md#definer-table).
;;;;
;;;; Read with the `lexpr` crate and embedded in the binary. Users extend or override it
;;;; with a file of the same shape: `--definers FILE`, or `.lisp-read-file.lisp` at a
;;;; project root. A later entry for the same operator replaces an earlier one, except
;;;; the entries marked :standard (COMMON-LISP's own operators).
;;;;
;;;; Each entry is (OPERATOR KEY VALUE ...). OPERATOR matches the form's operator by
;;;; symbol name, case-insensitively, ignoring any package prefix (cl:defun, ASDF:DEFSYSTEM).
;;;; Positions N count the form's elements, the operator being element 0.
;;;;
;;;;   :name N            the element that holds the name (default 1)
;;;;   :name-in-list t    when that element is a list, its first element is the name
;;;;                      (defstruct (point (:conc-name p-)) ...)
;;;;   :foreign-name K    CFFI's naming, K :function or :variable: a string in the name's
;;;;                      place is a C name, the Lisp name being it with `_` as `-`
;;;;                      ("SSL_new" names ssl-new; a variable's "errno" names *errno*);
;;;;                      a list there holds a C name and a Lisp name in either order
;;;;   :inferred t        the parts after the name shown as the generic def... rule
;;;;                      infers them (docs/reader.md#the-generic-def-rule)
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
;;;;   :derives RULE      names the form makes without spelling them as its name
;;;;                      (docs/find.md#derived-definitions): :structure (defstruct),
;;;;                      :class-slots (slot :accessor/:reader/:writer), :brief-slots
;;;;                      (the same, and metatilities' (NAME INITFORM FLAGS) slots), :methods
;;;;                      (defgeneric's :method options), :setf-expander ((setf NAME)),
;;;;                      :package (:nicknames)
;;;;   :standard t        an operator of COMMON-LISP itself (built-in table only): a
;;;;                      project's or a user's table cannot replace its entry; such an
;;;;                      entry is ignored, and answers say so

;;; Functions and macros
(defun                     :name 1 :lambda-list 2 :body 3 :standard t)
(defmacro                  :name 1 :lambda-list 2 :body 3 :standard t)
(defgeneric                :name 1 :lambda-list 2 :options 3 :derives :methods :standard t)
(defmethod                 :name 1 :qualifiers t :standard t)
(define-compiler-macro     :name 1 :lambda-list 2 :body 3 :standard t)
(define-modify-macro       :name 1 :lambda-list 2 :shown (3) :doc 4 :standard t)
(define-setf-expander      :name 1 :lambda-list 2 :body 3 :derives :setf-expander :standard t)
(defsetf                   :name 1 :lambda-list 2 :doc 3 :body 4 :derives :setf-expander :standard t)
(define-method-combination :name 1 :lambda-list 2 :doc-keyword :documentation :body 4 :standard t)

;;; Types, classes, structures
(defclass                  :name 1 :superclasses 2 :slots 3 :options 4 :derives :class-slots :standard t)
(define-condition          :name 1 :superclasses 2 :slots 3 :options 4 :derives :class-slots :standard t)
(defstruct                 :name 1 :name-in-list t :slots-from 2 :derives :structure :standard t)
(deftype                   :name 1 :lambda-list 2 :body 3 :standard t)

;;; Variables and constants
(defvar                    :name 1 :value 2 :doc 3 :standard t)
(defparameter              :name 1 :value 2 :doc 3 :standard t)
(defconstant               :name 1 :value 2 :doc 3 :standard t)
(define-symbol-macro       :name 1 :value 2 :standard t)
(defglobal                 :name 1 :value 2 :doc 3)
(define-load-time-global   :name 1 :value 2 :doc 3)
(define-constant           :name 1 :value 2 :doc-keyword :documentation)

;;; Packages, readtables, systems, tests
(defpackage                :name 1 :options 2 :derives :package :standard t)
(define-package            :name 1 :options 2 :derives :package)
(in-package                :whole t :standard t)
(in-readtable              :whole t)
(defreadtable              :name 1)
(defsystem                 :name 1 :keywords (:depends-on) :doc-keyword :description)
(deftest                   :name 1)

;;; Containers: their children are top-level forms too
(progn                     :container 1 :standard t)
(eval-when                 :shown (1) :container 2 :standard t)
(locally                   :container 1 :standard t)
(macrolet                  :shown (1) :container 2 :standard t)
(symbol-macrolet           :shown (1) :container 2 :standard t)
(let                       :shown (1) :container 2 :standard t)
(let*                      :shown (1) :container 2 :standard t)
(flet                      :shown (1) :container 2 :standard t)
(labels                    :shown (1) :container 2 :standard t)

;;;; Definers and containers of widely used libraries, chosen from data: the operators
;;;; of top-level forms and container children counted over the Debian `cl-*` sources
;;;; (`cargo run --release --example measure_collapsed -- --operators`), and, for
;;;; libraries Debian does not package, over their repositories (serapeum, lem, McCLIM,
;;;; trivia, parachute, rove). Each group names its source; counts are in
;;;; docs/decisions.md#the-library-definers-of-the-built-in-table. An operator the generic
;;;; `def...` rule already shows right (a list after the name, a docstring after that)
;;;; needs no entry; an entry is listed when the rule would show the wrong part or when the
;;;; operator does not start with `def`.

;;; ASDF and UIOP (Debian cl-asdf, also vendored by cl-cffi): 314 with-upgradability forms
(with-upgradability        :shown (1) :container 2)
(when-upgrading            :shown (1) :container 2)
(defun*                    :name 1 :lambda-list 2 :body 3)
(defgeneric*               :name 1 :lambda-list 2 :options 3 :derives :methods)

;;; Test frameworks: FiveAM (Debian fiveam, used by 13 Debian libraries, serapeum,
;;; McCLIM, trivia), lisp-unit and parachute (define-test), rt and rove (deftest, above)
(test                      :name 1 :name-in-list t :body 2)
(def-suite                 :name 1 :doc-keyword :description)
(in-suite                  :whole t)
(define-test               :name 1 :name-in-list t)

;;; CFFI (Debian cl-cffi; used by cl+ssl, osicat, sqlite, lem, McCLIM)
(defcstruct                :name 1 :name-in-list t :slots-from 2)
(defcunion                 :name 1 :name-in-list t :slots-from 2)
(defcenum                  :name 1 :name-in-list t :slots-from 2)
(defbitfield               :name 1 :name-in-list t :slots-from 2)
(defctype                  :name 1 :shown (2) :doc 3)
(defcfun                   :name 1 :foreign-name :function :inferred t)
(defcvar                   :name 1 :foreign-name :variable :shown (2) :doc 3)
(defcallback               :name 1 :shown (2) :lambda-list 3 :body 4)
(define-foreign-library    :name 1 :name-in-list t)
(define-foreign-type       :name 1 :superclasses 2 :slots 3 :options 4)

;;; UFFI (Debian cl-uffi, and CFFI's uffi-compat, whose def-function is a defcfun): 40
;;; def-function forms in the clsql drivers
(def-function              :name 1 :foreign-name :function :inferred t)

;;; iterate (Debian iterate): clause templates are the names
(defmacro-clause           :name 1 :body 2)
(defmacro-driver           :name 1 :body 2)
(defconst                  :name 1 :value 2 :doc 3)

;;; serapeum (github.com/ruricolist/serapeum)
(->                        :name 1 :lambda-list 2 :shown (3))
(defsubst                  :name 1 :lambda-list 2 :body 3)
(def                       :name 1 :value 2 :doc 3)
(defalias                  :name 1 :shown (2) :doc 3)
(defvar-unbound            :name 1 :doc 2)
(defconstructor            :name 1 :slots-from 2)
(defcondition              :name 1 :superclasses 2 :slots 3 :options 4 :derives :class-slots)
(defstruct-read-only       :name 1 :name-in-list t :slots-from 2 :derives :structure)

;;; trivia (github.com/guicho271828/trivia)
(defpattern                :name 1 :lambda-list 2 :body 3)
(defun-match               :name 1 :lambda-list 2 :body 3)
(defun-ematch              :name 1 :lambda-list 2 :body 3)
(defun-cmatch              :name 1 :lambda-list 2 :body 3)
(defun-match*              :name 1 :lambda-list 2 :body 3)
(defun-ematch*             :name 1 :lambda-list 2 :body 3)
(defun-cmatch*             :name 1 :lambda-list 2 :body 3)

;;; McCLIM (github.com/McCLIM/McCLIM); define-command is lem's too
(define-application-frame  :name 1 :superclasses 2 :slots 3 :options 4 :derives :class-slots)
(define-presentation-method :name 1 :qualifiers t)
(define-presentation-type  :name 1 :lambda-list 2 :keywords (:inherit-from) :doc-keyword :description)
(define-command            :name 1 :name-in-list t :lambda-list 2 :body 3)
(define-command-table      :name 1 :keywords (:inherit-from))
(define-protocol-class     :name 1 :superclasses 2 :slots 3 :options 4 :derives :class-slots)
(defmethod*                :name 1 :qualifiers t)

;;; lem (github.com/lem-project/lem)
(define-major-mode         :name 1 :superclasses 2 :body 4)
(define-minor-mode         :name 1 :body 3)
(define-attribute          :name 1)
(define-editor-variable    :name 1 :value 2 :doc 3)

;;; SLIME (Debian slime): its 1,143 interface definitions
(definterface              :name 1 :lambda-list 2 :body 3)
(defimplementation         :name 1 :lambda-list 2 :body 3)
(defslimefun               :name 1 :lambda-list 2 :body 3)

;;; cl-containers, metatilities (Debian): 146 forms; eval-always (metatilities, also
;;; serapeum's) is eval-when with all three situations: its forms are top-level forms
(defclass*                 :name 1 :superclasses 2 :slots 3 :options 4 :derives :brief-slots)
(eval-always               :container 1)
