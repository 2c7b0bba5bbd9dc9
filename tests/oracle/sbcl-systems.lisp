;;;; tests/oracle/sbcl-systems.lisp -- what SBCL itself records of a system's symbols: where
;;;; they are defined (for tests/project/model_oracle.rs) and who calls them (for
;;;; tests/project/callers_oracle.rs), from one load of each system
;;;; (tests/project/sbcl_systems.rs runs it and caches the output).
;;;;
;;;; sbcl --non-interactive --no-userinit --load tests/oracle/sbcl-systems.lisp \
;;;;      --eval '(oracle:run "OUT" (list "cl-ppcre" "alexandria" ...))'
;;;;
;;;; Each system is loaded with ASDF (dependencies first, each in turn), then, for every
;;;; symbol of every package that appeared while loading it (and the `setf` function
;;;; names of those symbols), `sb-introspect:find-definition-sources-by-name` is asked for
;;;; every definition type, and SBCL's cross-reference data who calls each function
;;;; (`sb-introspect:who-calls`) or expands each macro (`sb-introspect:who-macroexpands`);
;;;; what lies in the system's own source directory is written, one line each
;;;; (tab-separated):
;;;;
;;;;   SYSTEM <name> <source-directory>
;;;;   FEATURES <feature> ...                  *features* once the system is loaded
;;;;   FILE <pathname>                         a file the system compiles
;;;;   FAIL <name> <reason>                    the system did not load
;;;;   DEF <category> <type> <package> <name> <file> <form> <line>
;;;;   CALL <how> <callee-package> <callee> <caller> <file> <form> <line>
;;;;
;;;; <form> is the 0-based index of the top-level form SBCL read the definition or the
;;;; caller from (the first element of its form path; -1 when not recorded); <line> is
;;;; 1-based, the line of the character offset SBCL records when it records one (0
;;;; otherwise).
;;;; <category> says what made the definition when SBCL can tell: struct-constructor,
;;;; struct-copier, struct-predicate, struct-accessor, struct-setf-accessor,
;;;; slot-reader, slot-writer, or "-" (read from the form by the test).
;;;; <how> is `call` or `macro`; <callee> is the symbol's name, lowercased; <caller> SBCL's
;;;; name of the calling function, printed.
;;;;
;;;; What SBCL records depends on whether ASDF compiles a file or loads its cached fasl
;;;; (an `eval-when (:compile-toplevel)` defines functions, or pushes features, only when
;;;; compiling): the Rust side runs this with an empty fasl cache of its own, so that
;;;; every file is compiled.

(require :asdf)
(require :sb-introspect)

(defpackage :oracle (:use :cl) (:export #:run))
(in-package :oracle)

(defparameter *types*
  '(:function :generic-function :macro :compiler-macro :setf-expander :structure
    :condition :class :method-combination :variable :constant :type :symbol-macro
    :method))

(defun file-lines (path)
  "A vector of the character offsets where each line starts."
  (with-open-file (in path :external-format '(:utf-8 :replacement #\?))
    (let ((starts (make-array 1 :adjustable t :fill-pointer 1 :initial-element 0))
          (i 0))
      (loop for c = (read-char in nil) while c
            do (incf i)
               (when (char= c #\Newline) (vector-push-extend i starts)))
      starts)))

(defvar *lines* (make-hash-table :test 'equal))

(defun line-of (path offset)
  (let ((starts (or (gethash path *lines*)
                    (setf (gethash path *lines*) (file-lines path)))))
    ;; the last line start <= offset
    (let ((lo 0) (hi (1- (length starts))))
      (loop while (< lo hi)
            do (let ((mid (ceiling (+ lo hi) 2)))
                 (if (<= (aref starts mid) offset) (setf lo mid) (setf hi (1- mid)))))
      (1+ lo))))

(defun under-p (file directory)
  (let ((f (namestring file)) (d (namestring directory)))
    (and (>= (length f) (length d)) (string= d f :end2 (length d)))))

(defun component-files (component)
  "The Lisp files COMPONENT compiles here (not those its :if-feature leaves out)."
  (cond ((let ((feature (asdf::component-if-feature component)))
           (and feature (not (uiop:featurep feature))))
         nil)
        ((typep component 'asdf:cl-source-file) (list (asdf:component-pathname component)))
        ((typep component 'asdf:parent-component)
         (mapcan #'component-files (asdf:component-children component)))))

(defun struct-derived (name)
  "Names (string form) -> category for the functions a structure NAME makes."
  (let ((dd (sb-kernel:find-defstruct-description name nil))
        (table (make-hash-table :test 'equal)))
    (when dd
      (loop for (c . nil) in (sb-kernel::dd-constructors dd)
            do (setf (gethash c table) "struct-constructor"))
      (let ((c (sb-kernel::dd-copier-name dd)))
        (when c (setf (gethash c table) "struct-copier")))
      (let ((p (sb-kernel::dd-predicate-name dd)))
        (when p (setf (gethash p table) "struct-predicate")))
      (dolist (slot (sb-kernel:dd-slots dd))
        (let ((a (sb-kernel:dsd-accessor-name slot)))
          (when a
            (setf (gethash a table) "struct-accessor")
            (unless (sb-kernel:dsd-read-only slot)
              (setf (gethash (list 'setf a) table) "struct-setf-accessor"))))))
    table))

(defun slot-derived (class-name)
  (let ((class (find-class class-name nil)) (table (make-hash-table :test 'equal)))
    (when (and class (typep class 'standard-class) (not (typep class 'structure-class)))
      (ignore-errors
       (dolist (slot (sb-mop:class-direct-slots class))
         (dolist (r (sb-mop:slot-definition-readers slot))
           (setf (gethash r table) "slot-reader"))
         (dolist (w (sb-mop:slot-definition-writers slot))
           (setf (gethash w table) "slot-writer")))))
    table))

(defun print-name (name)
  (let ((*package* (find-package :keyword)))
    (if (consp name)
        (format nil "(~(~a~) ~(~a~))" (first name) (symbol-name (second name)))
        (string-downcase (symbol-name name)))))

(defun symbols-of (packages)
  (let ((symbols '()))
    (dolist (p packages)
      (do-symbols (s p)
        (when (member (symbol-package s) packages)
          (pushnew s symbols))))
    (sort symbols #'string< :key #'symbol-name)))

(defun location (source directory)
  "FILE FORM LINE of SOURCE when it lies under DIRECTORY."
  (let* ((path (sb-introspect:definition-source-pathname source))
         (offset (sb-introspect:definition-source-character-offset source))
         (form (first (sb-introspect:definition-source-form-path source)))
         (file (and path (ignore-errors (namestring (truename path))))))
    (when (and file (or form offset) (under-p file directory))
      (values file (or form -1) (if offset (line-of file offset) 0)))))

(defun record (out category type package name source directory)
  (multiple-value-bind (file form line) (location source directory)
    (when file
      (format out "DEF~c~a~c~(~a~)~c~a~c~a~c~a~c~d~c~d~%"
              #\Tab category #\Tab type #\Tab package #\Tab name #\Tab file #\Tab form
              #\Tab line))))

(defun package-of (name)
  (let ((s (if (consp name) (second name) name)))
    (if (symbol-package s) (package-name (symbol-package s)) "")))

(defun derived-category (name structs slots)
  (or (loop for table in structs thereis (gethash name table))
      (loop for table in slots thereis (gethash name table))
      "-"))

(defun definitions (out system packages directory)
  (declare (ignore system))
  (let* ((symbols (symbols-of packages))
         (structs (loop for s in symbols
                        when (sb-kernel:find-defstruct-description s nil)
                          collect (struct-derived s)))
         (slots (loop for s in symbols when (find-class s nil) collect (slot-derived s))))
    (dolist (s symbols)
      (dolist (name (list s (list 'setf s)))
        (dolist (type *types*)
          (unless (and (consp name) (not (member type '(:function :generic-function :method))))
            (dolist (source (ignore-errors
                             (sb-introspect:find-definition-sources-by-name name type)))
              (record out (if (member type '(:function :generic-function :method))
                              (derived-category name structs slots)
                              "-")
                      type (package-of name)
                      (print-name name) source directory))))))))

(defun one-line (thing)
  (substitute #\Space #\Tab
              (substitute #\Space #\Newline
                          (let ((*package* (find-package :keyword)))
                            (prin1-to-string thing)))))

;;; `sb-introspect:who-calls` and `who-macroexpands` each walk every function of the
;;; image (`collect-xref`): asked for every symbol of 42 systems, that walk was most of
;;; the run. `xref-index` walks once per system and answers every symbol of it, with the
;;; same entries in the same order (the loop below is `collect-xref`'s).
(defun xref-caller-name (name fun)
  "The caller's name as `collect-xref` gives it."
  (cond ((sb-c::transform-p name)
         (let ((fun-name (sb-kernel:%fun-name fun))
               (type (sb-c::transform-type name)))
           (append (if (consp fun-name) fun-name (list fun-name))
                   (and (sb-kernel:fun-type-p type)
                        (list (second (sb-kernel:type-specifier type)))))))
        ((sb-c::vop-info-p name) (list 'sb-c:define-vop (sb-c::vop-info-name name)))
        (t name)))

(defun xref-index (symbols)
  "A table (kind . symbol) -> the (caller . source) entries of SYMBOLS, for the kinds
:calls and :macroexpands, as `collect-xref` would list them."
  (let ((wanted (make-hash-table :test 'eq)) (index (make-hash-table :test 'equal)))
    (dolist (s symbols) (setf (gethash s wanted) t))
    (sb-c:map-simple-funs
     (lambda (name fun)
       (let ((xrefs (sb-kernel:%simple-fun-xrefs fun)))
         (when xrefs
           (sb-c:map-packed-xref-data
            (lambda (kind xref-name form-number)
              (when (and (member kind '(:calls :macroexpands))
                         (symbolp xref-name) (gethash xref-name wanted))
                (let ((source (sb-introspect::find-function-definition-source fun)))
                  (setf (sb-introspect::definition-source-form-number source) form-number)
                  (push (cons (xref-caller-name name fun) source)
                        (gethash (cons kind xref-name) index)))))
            xrefs)))))
    index))

(defun one-line (thing)
  (substitute #\Space #\Tab
              (substitute #\Space #\Newline
                          (let ((*package* (find-package :keyword)))
                            (prin1-to-string thing)))))

(defun callers (out packages directory)
  (let* ((symbols (symbols-of packages))
         (index (xref-index symbols)))
    (dolist (s symbols)
      (let ((how (cond ((macro-function s) "macro")
                       ((fboundp s) "call"))))
        (when how
          (dolist (entry (gethash (cons (if (string= how "macro") :macroexpands :calls) s)
                                  index))
            (multiple-value-bind (file form line) (location (cdr entry) directory)
              (when file
                (format out "CALL~c~a~c~a~c~a~c~a~c~a~c~d~c~d~%"
                        #\Tab how #\Tab (package-of s) #\Tab
                        (string-downcase (symbol-name s)) #\Tab (one-line (car entry))
                        #\Tab file #\Tab form #\Tab line)))))))))

(defun print-features (out)
  "*features* now (a system may push some while it loads): keywords by name, other
symbols as PACKAGE::NAME."
  (format out "FEATURES~{~c~a~}~%"
          (loop for f in *features*
                collect #\Tab
                collect (let ((p (symbol-package f)))
                          (if (or (null p) (eq p (find-package :keyword)))
                              (string-downcase (symbol-name f))
                              (format nil "~(~a::~a~)" (package-name p) (symbol-name f)))))))

(defun print-nicknames (out)
  "Every package's nicknames now, a line per package that has some: the oracle takes a
package named by a nickname (a package outside the scope, known by the name a
defpackage's :use or :import-from gives it) for that package."
  (dolist (p (list-all-packages))
    (when (package-nicknames p)
      (format out "NICKNAMES~c~(~a~)~{~c~(~a~)~}~%" #\Tab (package-name p)
              (loop for n in (package-nicknames p) collect #\Tab collect n)))))

(defun load-quietly (name)
  (handler-bind ((warning #'muffle-warning))
    (let ((*standard-output* (make-broadcast-stream))
          (*error-output* (make-broadcast-stream)))
      (asdf:load-system name))))

(defun run-one (out name)
  (let ((system (ignore-errors (asdf:find-system name nil))))
    (unless system
      (format out "FAIL~c~a~cno such system~%" #\Tab name #\Tab)
      (return-from run-one))
    (let* ((directory (namestring (truename (asdf:system-source-directory system))))
           (before (list-all-packages)))
      ;; Dependencies first, so that the packages that appear are the system's.
      (handler-case
          (progn
            (dolist (d (asdf:system-depends-on system))
              (when (stringp d) (load-quietly d)))
            (setf before (list-all-packages))
            (load-quietly name))
        (error (e)
          (format out "FAIL~c~a~c~a~%" #\Tab name #\Tab
                  (substitute #\Space #\Newline (princ-to-string e)))
          (return-from run-one)))
      (format out "SYSTEM~c~a~c~a~%" #\Tab name #\Tab directory)
      (print-features out)
      (dolist (f (component-files system))
        (let ((true (ignore-errors (namestring (truename f)))))
          (when true (format out "FILE~c~a~%" #\Tab true))))
      (let ((packages (set-difference (list-all-packages) before)))
        (dolist (p packages)
          (dolist (source (ignore-errors
                           (sb-introspect:find-definition-sources-by-name
                            (package-name p) :package)))
            (record out "-" :package "" (string-downcase (package-name p)) source
                    directory)))
        (print-nicknames out)
        (definitions out system packages directory)
        (callers out packages directory)))))

(defun run (output systems)
  (with-open-file (out output :direction :output :if-exists :supersede
                              :external-format :utf-8)
    (dolist (name systems)
      (run-one out name)
      (finish-output out))))
