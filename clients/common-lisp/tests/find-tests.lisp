;;;; find-tests.lisp -- LISP-FIND, and READ-FILE's :kinds, :features and :strategy,
;;;; against the real program in both transports

(in-package #:lisp-read-file/tests)

(defun entry-summary (entries &rest keys)
  "Each plist of ENTRIES as the list of its values under KEYS."
  (mapcar (lambda (entry) (mapcar (lambda (key) (getf entry key)) keys)) entries))

(deftest lisp-find-definitions
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (let ((found (lisp-read-file:lisp-find "fixtures/demo" :name "area")))
        (check-equal "definitions" (getf found :mode))
        (check-equal 3 (getf found :total))
        (check-equal '(("fixtures/demo/demo.lisp" 16 "defgeneric" "area")
                       ("fixtures/demo/demo.lisp" 19 "defmethod" "area (shape)")
                       ("fixtures/demo/demo.lisp" 22 "defmethod" "area :around (shape)"))
                     (entry-summary (getf found :definitions) :file :line :kind :name)
                     (format nil "~S: the definitions" transport))
        ;; A definition's line is its head; a method under its generic function is
        ;; continued.
        (check (search (format nil "16: (defgeneric area (shape)~%19: ((s shape))~%")
                       (getf found :content)))
        (check-equal nil (getf found :truncated))
        (check (null (getf found :references))))
      ;; A symbol for a name; kinds as symbols; the bodies.
      (let* ((found (lisp-read-file:lisp-find *demo* :name 'area :kinds '(:defmethod)
                                                     :include-body t))
             (bodies (mapcar (lambda (d) (getf d :body)) (getf found :definitions))))
        (check-equal '("(defmethod area ((s shape))
  (* (size s) (size s)))"
                       "(defmethod area :around ((s shape))
  (max 0 (call-next-method)))")
                     bodies (format nil "~S: :kinds and :include-body" transport)))
      ;; Derived definitions: the slot's reader, made by the defclass.
      (let ((size (first (getf (lisp-read-file:lisp-find *demo* :name "size")
                               :definitions))))
        (check-equal "reader" (getf size :kind))
        (check-equal 11 (getf (getf size :form) :line)))
      ;; A name pattern, paged: one entry a page, the next offset to continue.
      (let ((page (lisp-read-file:lisp-find *demo* :name-pattern "^area$" :limit 1)))
        (check-equal t (getf page :truncated))
        (check-equal 1 (getf page :next-offset))
        (let ((next (lisp-read-file:lisp-find *demo* :name-pattern "^area$" :limit 1
                                                     :offset (getf page :next-offset))))
          (check-equal '(19) (mapcar (lambda (d) (getf d :line))
                                     (getf next :definitions)))))
      ;; Features: under :ccl the #+sbcl defun is not read.
      (check-equal 1 (getf (lisp-read-file:lisp-find *demo* :name "fast-path") :total))
      (check-equal 0 (getf (lisp-read-file:lisp-find *demo* :name "fast-path"
                                                     :features '(:ccl))
                           :total)
                   (format nil "~S: :features" transport)))))

(deftest lisp-find-references-and-text
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (let ((refs (lisp-read-file:lisp-find "fixtures/demo" :symbol "shape")))
        (check-equal "references" (getf refs :mode))
        (check (null (getf refs :definitions)))
        ;; The defclass defines it; the macro inside EVAL-WHEN is its own entry.
        (check-equal '((11 "defclass" t) (31 "defmacro" nil))
                     (remove-if-not (lambda (entry) (member (first entry) '(11 31)))
                                    (entry-summary (getf refs :references)
                                                   :line :kind :definition))
                     (format nil "~S: the references" transport))
        (let ((use (first (getf (find 11 (getf refs :references)
                                      :key (lambda (r) (getf r :line)))
                                :uses))))
          (check-equal '(11 10 "(defclass shape ()")
                       (list (getf use :line) (getf use :column) (getf use :text)))))
      ;; The names level: each form by its kind and name, the same plists.
      (let ((names (lisp-read-file:lisp-find *demo* :symbol "shape" :detail :names)))
        (check (search (format nil "~%11: defclass shape  [definition]~%")
                       (getf names :content))
               (format nil "~S: :detail :names" transport))
        (check (not (search "(defclass" (getf names :content))))
        (check-equal (length (getf (lisp-read-file:lisp-find *demo* :symbol "shape")
                                   :references))
                     (length (getf names :references))))
      ;; A text: in a docstring, which is no use of a symbol.
      (let ((mentions (lisp-read-file:lisp-find *demo* :text "SBCL internals")))
        (check-equal "references" (getf mentions :mode))
        (check-equal '((25 "defun" "fast-path" nil))
                     (entry-summary (getf mentions :references) :line :kind :name :definition)
                     (format nil "~S: :text" transport))
        (check-equal '(27) (mapcar (lambda (u) (getf u :line))
                                   (getf (first (getf mentions :references)) :uses)))))))

;; Who calls a function, and what a definition calls: the reader of SIZE is called by the
;; primary method of AREA only (its :around method calls CALL-NEXT-METHOD and MAX).
(deftest lisp-find-callers-and-callees
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (let ((callers (lisp-read-file:lisp-find *demo* :callers 'size)))
        (check-equal "callers" (getf callers :mode))
        (check-equal '(("fixtures/demo/demo.lisp" 19 "defmethod" "area (shape)" "demo"))
                     (entry-summary (getf callers :callers) :file :line :kind :name :package)
                     (format nil "~S: the callers" transport))
        (check-equal '((20 6) (20 15))
                     (entry-summary (getf (first (getf callers :callers)) :calls)
                                    :line :column)))
      (let* ((callees (lisp-read-file:lisp-find *demo* :callees "area" :kinds '(:defmethod)))
             (primary (find 19 (getf callees :callees) :key (lambda (c) (getf c :line)))))
        (check-equal "callees" (getf callees :mode))
        (check-equal '(19 22) (mapcar (lambda (c) (getf c :line)) (getf callees :callees))
                     (format nil "~S: the definitions named AREA" transport))
        (check-equal '(("size" (("fixtures/demo/demo.lisp" 13 "reader"))))
                     (mapcar (lambda (callee)
                               (list (getf callee :name)
                                     (entry-summary (getf callee :definitions)
                                                    :file :line :kind)))
                             (getf primary :callees))
                     (format nil "~S: what the primary method calls" transport))))))

(deftest lisp-find-bad-arguments-are-refused-before-any-call
  (with-client (:transport :cli)
    (let ((lisp-read-file:*program* "/nonexistent/lisp-read-file"))
      ;; The arguments are checked before the program is looked for.
      (dolist (call (list (lambda () (lisp-read-file:lisp-find *demo*))
                          (lambda () (lisp-read-file:lisp-find *demo* :name "a" :symbol "b"))
                          (lambda () (lisp-read-file:lisp-find *demo* :callers "a" :callees "b"))
                          (lambda () (lisp-read-file:lisp-find *demo* :callers 7))
                          (lambda () (lisp-read-file:lisp-find *demo* :name 12))
                          (lambda () (lisp-read-file:lisp-find *demo* :text 'area))
                          (lambda () (lisp-read-file:lisp-find *demo* :name "a" :kinds "defun"))
                          (lambda () (lisp-read-file:lisp-find *demo* :name "a" :kinds '("a,b")))
                          (lambda () (lisp-read-file:lisp-find *demo* :name "a" :limit 0))
                          (lambda () (lisp-read-file:lisp-find *demo* :name "a" :detail :lines))))
        (check-reader-error "INVALID_ARGUMENT" *demo* call))
      (check-reader-error "INVALID_ARGUMENT" nil
                          (lambda () (lisp-read-file:lisp-find 3 :name "a")))))
  ;; The program's own refusal, as a condition.
  (with-client ()
    (check-reader-error "NOT_FOUND" "nope"
                        (lambda () (lisp-read-file:lisp-find "nope" :name "a")))))

(deftest read-file-kinds-features-and-strategies
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (let ((methods (getf (lisp-read-file:read-file *demo* :kinds '(:defmethod "defgeneric"))
                           :content)))
        (check (search "19: (defmethod area ((s shape)) ...)" methods))
        (check (search "16: (defgeneric area" methods))
        (check (not (search "(defclass" methods)) (format nil "~S: :kinds" transport)))
      (let ((under-ccl (getf (lisp-read-file:read-file *demo* :features '(:ccl)) :content)))
        (check (not (search "(defun fast-path" under-ccl)) (format nil "~S: :features" transport))
        (check (search "(defmethod area" under-ccl)))
      (check-equal (file-text *demo*)
                   (getf (lisp-read-file:read-file *demo* :strategy :complete) :content)
                   (format nil "~S: :complete" transport))
      (check-equal (format nil "(defpackage #:demo~%  (:use #:cl)~%")
                   (getf (lisp-read-file:read-file *demo* :strategy '(:line-range 2 3))
                         :content)
                   (format nil "~S: :line-range" transport))
      (check-equal ";;;; demo"
                   (getf (lisp-read-file:read-file *demo* :strategy '(:byte-range 0 9))
                         :content)
                   (format nil "~S: :byte-range" transport))
      (check (search "(defclass shape"
                     (getf (lisp-read-file:read-file *demo* :strategy :default) :content)))))
  (with-client ()
    (dolist (call (list (lambda () (lisp-read-file:read-file *demo* :strategy :whole))
                        (lambda () (lisp-read-file:read-file *demo* :strategy '(:line-range 0)))
                        (lambda () (lisp-read-file:read-file *demo* :strategy '(:byte-range -1 2)))
                        (lambda () (lisp-read-file:read-file *demo* :strategy '(:line-range 1 2 3)))
                        (lambda () (lisp-read-file:read-file *demo* :kinds '(nil)))
                        (lambda () (lisp-read-file:read-file *demo* :features '(""))) ))
      (check-reader-error "INVALID_ARGUMENT" *demo* call))))
