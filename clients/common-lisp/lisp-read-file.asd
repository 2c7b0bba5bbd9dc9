;;;; lisp-read-file.asd -- the Common Lisp client of the lisp-read-file program

(defsystem "lisp-read-file"
  :description "Read, outline and search Common Lisp files from Lisp through the
lisp-read-file program (one MCP child process per root), without evaluating them."
  :version "0.1.0"
  :author "The lisp-read-file authors"
  :license "MIT"
  :depends-on ("yason" "bordeaux-threads" "uiop")
  :serial t
  :components ((:file "package")
               (:file "conditions")
               (:file "json")
               (:file "program")
               (:file "mcp")
               (:file "api")
               (:file "find")
               (:file "compat"))
  :in-order-to ((test-op (test-op "lisp-read-file/tests"))))

(defsystem "lisp-read-file/tests"
  :description "Tests of the lisp-read-file client; they run the real program."
  :depends-on ("lisp-read-file" "bordeaux-threads" "uiop")
  :pathname "tests/"
  :serial t
  :components ((:file "harness")
               (:file "tests")
               (:file "find-tests")
               (:file "hint-tests"))
  :perform (test-op (o c)
             (unless (uiop:symbol-call '#:lisp-read-file/tests '#:run-tests)
               (error "lisp-read-file client tests failed"))))
