;;;; tests.lisp -- the client against the real program, in every mode

(in-package #:lisp-read-file/tests)

;;; Set-up: the program comes from LISP_READ_FILE_BIN (tests/lisp/cl_client.rs passes the
;;; binary Cargo built); files are read from this repository and from a Debian library.

(defparameter *binary* (uiop:getenv "LISP_READ_FILE_BIN")
  "The lisp-read-file binary under test.")

(defparameter *repository*
  (truename (asdf:system-relative-pathname "lisp-read-file" "../../"))
  "The root of this repository: fixtures/demo/demo.lisp is below it.")

(defparameter *library*
  #p"/usr/share/common-lisp/source/alexandria/"
  "A Debian Common Lisp library (cl-alexandria, a dependency of cl-yason).")

(defparameter *demo* "fixtures/demo/demo.lisp")

(defparameter *demo-text* "fixtures/demo/demo.collapsed.txt"
  "A text file: the demo's collapsed view, as the README shows it.")

(defmacro with-client ((&key (root '*repository*) (transport :mcp) (timeout 30)) &body body)
  "Run BODY with the client set to the binary under test, ROOT and TRANSPORT."
  `(let ((lisp-read-file:*program* *binary*)
         (lisp-read-file:*root* ,root)
         (lisp-read-file:*transport* ,transport)
         (lisp-read-file:*timeout* ,timeout)
         (lisp-read-file:*extra-arguments* '()))
     ,@body))

(defun file-text (relative)
  "The text of the file RELATIVE to the repository."
  (uiop:read-file-string (merge-pathnames relative *repository*)))

(defun plist-keys (plist)
  "The keys of PLIST, in order."
  (loop for key in plist by #'cddr collect key))

(defun same-keys-p (expected plist)
  "Whether PLIST has exactly the keys EXPECTED, in any order."
  (null (set-exclusive-or expected (plist-keys plist))))

(defun signal-process (pid signal)
  "Send SIGNAL (a name such as \"KILL\", \"STOP\" or \"0\") to PID; 0 when it was sent.
In SBCL through kill(2): SBCL's RUN-PROGRAM may lose the exit status of a short child
while other children come and go, which made kill(1) answer NIL now and then."
  #+sbcl
  (progn
    (require :sb-posix)
    (handler-case
        (progn (uiop:symbol-call '#:sb-posix '#:kill pid
                                 (if (string= signal "0")
                                     0
                                     (symbol-value (find-symbol (format nil "SIG~A" signal)
                                                                '#:sb-posix))))
               0)
      (error () 1)))
  #-sbcl
  (or (nth-value 2 (uiop:run-program (list "kill" (format nil "-~A" signal)
                                           (princ-to-string pid))
                                     :ignore-error-status t))
      1))

(defun process-exists-p (pid)
  "Whether a process PID exists (signal 0)."
  (zerop (signal-process pid "0")))

(defun process-state (pid)
  "The state letter of PID in /proc (Linux): R, S, T (stopped)..., or NIL."
  (let ((line (ignore-errors (with-open-file (in (format nil "/proc/~D/stat" pid))
                               (read-line in)))))
    (when line
      (let ((paren (position #\) line :from-end t)))
        (and paren (< (+ paren 2) (length line)) (char line (+ paren 2)))))))

(defun stop-process (pid)
  "Stop PID with SIGSTOP and wait until it is stopped; 0 when it was sent. A signal
is delivered asynchronously: a request sent at once can still be answered by a
thread that has not stopped yet. Where /proc is missing, a pause stands in."
  (let ((sent (signal-process pid "STOP")))
    (if (process-state pid)
        (loop repeat 200
              until (eql (process-state pid) #\T)
              do (sleep 0.01))
        (sleep 0.2))
    sent))

(defun call-in-thread (function)
  "Start FUNCTION in a thread that keeps the client's settings; join it with
JOIN-RESULT. Its value, or the condition it signalled, is what JOIN-RESULT returns."
  (let ((program lisp-read-file:*program*) (root lisp-read-file:*root*)
        (transport lisp-read-file:*transport*) (timeout lisp-read-file:*timeout*))
    (bt:make-thread
     (lambda ()
       (let ((lisp-read-file:*program* program) (lisp-read-file:*root* root)
             (lisp-read-file:*transport* transport) (lisp-read-file:*timeout* timeout))
         (handler-case (funcall function)
           (error (condition) condition))))
     :name "lisp-read-file test")))

(defun join-result (thread)
  "The value of the thread started by CALL-IN-THREAD."
  (bt:join-thread thread))

(defun demo-meta-keys ()
  "The keys of READ-FILE's :META for a UTF-8 file."
  '(:total-forms :expanded-forms :truncated :next-offset :total-lines :byte-length
    :mtime-ms :diagnostics :applied-strategy))

;;; The program is there

(deftest binary-is-given
  (check (and *binary* (probe-file *binary*))
         (format nil "LISP_READ_FILE_BIN names the binary: ~S" *binary*)))

;;; READ-FILE on the demo, over MCP

(deftest read-file-collapsed-view
  (with-client ()
    (let* ((result (lisp-read-file:read-file *demo*))
           (meta (getf result :meta)))
      (check (same-keys-p '(:path :mode :content :meta) result))
      (check-equal *demo* (getf result :path))
      (check-equal "lisp-collapsed" (getf result :mode))
      (check-equal (file-text "fixtures/demo/demo.collapsed.txt") (getf result :content))
      (check (same-keys-p (demo-meta-keys) meta) (format nil "meta keys: ~S" meta))
      (check-equal 9 (getf meta :total-forms))
      (check-equal 0 (getf meta :expanded-forms))
      (check-equal 35 (getf meta :total-lines))
      (check-equal 833 (getf meta :byte-length))
      (check (integerp (getf meta :mtime-ms)))
      (check-equal nil (getf meta :truncated))
      (check-equal nil (getf meta :next-offset))
      (check-equal nil (getf meta :diagnostics)))))

(deftest read-file-name-pattern-expands-verbatim
  (with-client ()
    (let ((result (lisp-read-file:read-file *demo* :name-pattern "^area$")))
      ;; The generic function and its two methods.
      (check-equal 3 (getf (getf result :meta) :expanded-forms))
      (check (search (format nil "19: (defmethod area ((s shape))~%20:   (* (size s) (size s)))")
                     (getf result :content)))
      (check (search "22: (defmethod area :around ((s shape))" (getf result :content))))))

(deftest read-file-content-pattern-expands-forms
  (with-client ()
    (let ((result (lisp-read-file:read-file *demo* :content-pattern "incf")))
      (check-equal 1 (getf (getf result :meta) :expanded-forms))
      (check (search "34:        (incf *count*)" (getf result :content))))))

(deftest read-file-paging-and-comments
  (with-client ()
    (let* ((page (lisp-read-file:read-file *demo* :limit 3))
           (meta (getf page :meta)))
      (check-equal t (getf meta :truncated))
      (check-equal 10 (getf meta :next-offset))
      (let ((next (lisp-read-file:read-file *demo* :offset (getf meta :next-offset))))
        (check (search "11: (defclass shape" (getf next :content)))
        (check (not (search "(defvar *count*" (getf next :content))))))
    (let ((headers (lisp-read-file:read-file *demo* :comments :headers :limit 2)))
      (check (search " 1: ;;;; demo.lisp -- shapes" (getf headers :content))))
    (let ((none (lisp-read-file:read-file *demo* :comments "none")))
      (check (not (search ";;;;" (getf none :content)))))))

(deftest read-file-raw-lines
  (with-client ()
    (let ((result (lisp-read-file:read-file *demo* :collapsed nil :offset 1 :limit 2
                                                   :line-numbers t)))
      (check-equal "raw" (getf result :mode))
      (check-equal (format nil " 2: (defpackage #:demo~% 3:   (:use #:cl)~%~
                                 [Showing lines 2-3 of 35. Use :offset 3 to read more.]~%")
                   (getf result :content))
      (check-equal 3 (getf (getf result :meta) :next-offset)))
    (let ((plain (lisp-read-file:read-file *demo* :collapsed nil :limit 1)))
      (check-equal (format nil ";;;; demo.lisp -- shapes: the example of lisp-read-file's ~
                                README~%[Showing lines 1-1 of 35. Use :offset 1 to read more.]~%")
                   (getf plain :content)))))

(deftest read-file-greps-text-with-context
  (with-client ()
    (let ((result (lisp-read-file:read-file *demo-text* :content-pattern "defclass"
                                                        :context-lines 1)))
      (check-equal "text-filtered" (getf result :mode))
      (check-equal (format nil "~{~A~%~}"
                           '("3- 8: (defvar *count* 0 ...) ;; How many shapes exist."
                             "4:11: (defclass shape () (name size) ...) ;; A thing with a size."
                             "5-16: (defgeneric area (shape) ...) ;; Area of SHAPE."))
                   (getf result :content)))))

(deftest read-file-greps-with-max-count-and-one-sided-context
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (let ((result (lisp-read-file:read-file *demo-text* :content-pattern "def"
                                                          :max-count 1 :before-context 0
                                                          :after-context 1)))
        (check-equal (format nil "~{~A~%~}"
                             '("1: 2: (defpackage #:demo ...)"
                               "2- 6: (in-package #:demo)"))
                     (getf result :content))
        (check-equal 1 (getf (getf result :meta) :stopped-at-max-count)))
      (handler-case (progn (lisp-read-file:read-file *demo-text* :content-pattern "def"
                                                                 :max-count 0)
                           (check nil))
        (lisp-read-file:reader-error (e)
          (check-equal "INVALID_ARGUMENT" (lisp-read-file:reader-error-code e)))))))

(deftest read-file-takes-pathnames-and-absolute-paths
  (with-client ()
    (let ((absolute (lisp-read-file:read-file (merge-pathnames *demo* *repository*))))
      (check-equal *demo* (getf absolute :path))
      (check-equal "lisp-collapsed" (getf absolute :mode)))
    (let ((relative (lisp-read-file:read-file (pathname *demo*))))
      (check-equal *demo* (getf relative :path)))))

;;; A directory or an .asd file gives the project map (docs/lisp-client.md, "Projects").
(deftest read-file-gives-project-maps
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (let* ((map (lisp-read-file:read-file "fixtures/project" :limit 6))
             (content (getf map :content)))
        (check-equal "project" (getf map :mode))
        (check-equal 0 (search "1 fixtures/project/shapes.asd" content))
        (check (search "4 fixtures/project/src/square.lisp" content)))
      (let ((matches (getf (lisp-read-file:read-file "fixtures/project"
                                                     :name-pattern "^total-area$")
                           :content)))
        (check (search "==> fixtures/project/src/square.lisp <==
 3: (in-package #:shapes)
15: (defun total-area (shapes)" matches))))))

;;; OUTLINE

(deftest outline-items-of-the-demo
  (with-client ()
    (multiple-value-bind (items file) (lisp-read-file:outline *demo*)
      (check-equal 10 (length items))
      (check-equal *demo* (getf file :path))
      (check-equal 35 (getf file :line-count))
      (check-equal 833 (getf file :byte-length))
      (check-equal nil (getf file :diagnostics))
      (check-equal '(:kind "comment" :start 0 :end 64 :start-line 1 :end-line 1)
                   (first items))
      (let ((package (second items)))
        (check-equal "form" (getf package :kind))
        (check-equal "defpackage" (getf package :operator))
        (check-equal "#:demo" (getf package :name))
        (check-equal "(defpackage #:demo ...)" (getf package :signature))
        (check-equal '(2 4) (list (getf package :start-line) (getf package :end-line))))
      (let ((around (find-if (lambda (item) (equal (getf item :qualifiers) '(":around")))
                             items)))
        (check-equal "area" (getf around :name))
        (check-equal '("shape") (getf around :specializers)))
      (let ((fast (find "fast-path" items :key (lambda (item) (getf item :name))
                                          :test #'equal)))
        (check-equal '("#+sbcl") (getf fast :conditionals))
        (check-equal "Use SBCL internals." (getf fast :doc)))
      (let* ((container (car (last items)))
             (child (first (getf container :children))))
        (check-equal "eval-when" (getf container :operator))
        (check-equal nil (getf container :name))
        (check-equal "with-shape" (getf child :name))
        (check-equal "defmacro" (getf child :operator))
        (check-equal 31 (getf child :start-line))))))

(deftest outline-errors-are-conditions
  (with-client ()
    (let ((condition (check-signals lisp-read-file:reader-error
                                    (lisp-read-file:outline "no/such/file.lisp"))))
      (when condition
        (check-equal "NOT_FOUND" (lisp-read-file:reader-error-code condition))
        (check-equal "no/such/file.lisp" (lisp-read-file:reader-error-path condition))))))

;;; A Debian library

(deftest every-function-on-a-debian-library
  (with-client (:root *library*)
    (let* ((file "alexandria-1/lists.lisp")
           (collapsed (lisp-read-file:read-file file))
           (expanded (lisp-read-file:read-file file :name-pattern "^flatten$"))
           (items (lisp-read-file:outline file))
           (compat (lisp-read-file:lisp-read-file file)))
      (check-equal "lisp-collapsed" (getf collapsed :mode))
      (check (> (getf (getf collapsed :meta) :total-forms) 30))
      (check (search "(defun flatten (tree) ...)" (getf collapsed :content)))
      (check-equal 1 (getf (getf expanded :meta) :expanded-forms))
      (check (search "Traverses the tree in order" (getf expanded :content)))
      (let ((flatten (find "flatten" items :key (lambda (item) (getf item :name))
                                           :test #'equal)))
        (check-equal "defun" (getf flatten :operator))
        (check (search (format nil "~D: (defun flatten" (getf flatten :start-line))
                       (getf collapsed :content))))
      (check-equal "lisp-collapsed" (gethash "mode" compat))
      (check-equal (getf (getf collapsed :meta) :total-forms)
                   (gethash "total_forms" (gethash "meta" compat)))
      (let ((lisp-read-file:*transport* :cli))
        (check-equal (getf collapsed :content)
                     (getf (lisp-read-file:read-file file) :content))))))

;;; Errors

(defun check-reader-error (code path thunk)
  "Check that THUNK signals READER-ERROR with CODE and PATH, and a message."
  (let ((condition (handler-case (progn (funcall thunk) nil)
                     (lisp-read-file:reader-error (c) c))))
    (check condition (format nil "a READER-ERROR ~A for ~S" code path))
    (when condition
      (check-equal code (lisp-read-file:reader-error-code condition))
      (check-equal path (lisp-read-file:reader-error-path condition))
      (check (plusp (length (lisp-read-file:reader-error-message condition))))
      (check (eql 0 (search code (princ-to-string condition)))))))

(defun check-tool-errors ()
  "The program's errors as READER-ERROR conditions, in the current transport."
  (check-reader-error "NOT_FOUND" "nope.lisp"
                      (lambda () (lisp-read-file:read-file "nope.lisp")))
  (check-reader-error "ACCESS_DENIED" "/etc/passwd"
                      (lambda () (lisp-read-file:read-file "/etc/passwd")))
  (check-reader-error "ACCESS_DENIED" "../outside.lisp"
                      (lambda () (lisp-read-file:read-file "../outside.lisp")))
  (check-reader-error "INVALID_ARGUMENT" *demo*
                      (lambda () (lisp-read-file:read-file *demo* :content-pattern "\\w{5000}")))
  ;; A directory gives its project map; raw lines of it are refused.
  (check-reader-error "INVALID_ARGUMENT" "fixtures"
                      (lambda () (lisp-read-file:read-file "fixtures" :collapsed nil))))

(deftest tool-errors-over-mcp
  (with-client ()
    (check-tool-errors)
    ;; Out of the schema's bounds: refused before the call.
    (check-reader-error "INVALID_ARGUMENT" *demo*
                        (lambda () (lisp-read-file:read-file *demo* :limit 0)))))

(deftest tool-errors-over-the-cli
  (with-client (:transport :cli)
    (check-tool-errors)
    (check-reader-error "INVALID_ARGUMENT" *demo*
                        (lambda () (lisp-read-file:read-file *demo* :limit 0)))
    ;; A usage error of the CLI (exit status 2) is INVALID_ARGUMENT too.
    (let ((lisp-read-file:*extra-arguments* '("--no-such-flag")))
      (check-reader-error "INVALID_ARGUMENT" nil
                          (lambda () (lisp-read-file:read-file *demo*))))))

(deftest bad-arguments-are-refused-before-any-call
  ;; No program at all: these never reach it.
  (let ((lisp-read-file:*program* "/nonexistent/lisp-read-file"))
    (check-reader-error "INVALID_ARGUMENT" *demo*
                        (lambda () (lisp-read-file:read-file *demo* :limit "ten")))
    (check-reader-error "INVALID_ARGUMENT" *demo*
                        (lambda () (lisp-read-file:read-file *demo* :comments :everything)))
    (check-reader-error "INVALID_ARGUMENT" *demo*
                        (lambda () (lisp-read-file:read-file *demo* :name-pattern 'area)))
    (check-reader-error "INVALID_ARGUMENT" ""
                        (lambda () (lisp-read-file:read-file "")))
    (check-reader-error "INVALID_ARGUMENT" nil
                        (lambda () (lisp-read-file:read-file 42)))))

;;; Control characters, big integers, wrong settings (an outside tester's report)

(defun elapsed-seconds (start)
  "Seconds since the internal real time START."
  (/ (- (get-internal-real-time) start) internal-time-units-per-second))

(defun every-kind-of-character ()
  "A string of every ASCII character, DEL, and characters beyond ASCII up to U+1F600."
  (concatenate 'string
               (loop for code below 128 collect (code-char code))
               (mapcar #'code-char '(#x80 #xE9 #x2028 #x2029 #xFEFF #xFFFF #x10000 #x1F600
                                     #x10FFFF))))

(deftest requests-are-json-in-printable-ascii
  ;; YASON wrote NUL, ESC... as they are, and integers in *PRINT-BASE*: a line the
  ;; server could only answer with a parse error.
  (let* ((string (every-kind-of-character))
         (line (let ((*print-base* 16) (*print-radix* t))
                 (lisp-read-file::write-json
                  (lisp-read-file::json-object "s" string "n" (expt 10 30) "m" -12
                                               "a" (list 1 "x" (lisp-read-file::json-object)))))))
    (check (every (lambda (char) (<= #x20 (char-code char) #x7E)) line)
           (format nil "every character written is printable ASCII: ~S" line))
    (let ((parsed (ignore-errors (lisp-read-file::parse-json line))))
      (check-equal string (lisp-read-file::json-get parsed "s") "the string read back")
      (check-equal (expt 10 30) (lisp-read-file::json-get parsed "n") "a big integer, exact")
      (check-equal -12 (lisp-read-file::json-get parsed "m"))
      (check (equalp #(1 "x" nil) (lisp-read-file::json-get parsed "a"))
             (format nil "an array: ~S" (lisp-read-file::json-get parsed "a"))))))

(deftest control-characters-in-arguments-are-answered-at-once
  ;; An ESC in a pattern or a NUL in a path made the server answer a parse error
  ;; without an id, and the call wait for *TIMEOUT*.
  (with-client (:timeout 5)
    (let ((start (get-internal-real-time))
          (escape (string (code-char 27))))
      (let ((result (handler-case (lisp-read-file:read-file *demo* :name-pattern escape)
                      (error (condition) condition))))
        (check (listp result) (format nil "the pattern is answered: ~A" result))
        (when (listp result)
          (check-equal 0 (getf (getf result :meta) :expanded-forms))
          (check (search "No definition matched" (getf result :content)))))
      ;; Every control character: still a pattern the program reads, matching nothing.
      (let ((result (handler-case
                        (lisp-read-file:read-file
                         *demo* :content-pattern (coerce (loop for code from 1 below 32
                                                               collect (code-char code))
                                                         'string))
                      (error (condition) condition))))
        (check (listp result) (format nil "every control character is answered: ~A" result)))
      (check-reader-error "INVALID_ARGUMENT" (format nil "~A\\u{0}" *demo*)
                          (lambda ()
                            (lisp-read-file:read-file (format nil "~A~C" *demo* (code-char 0)))))
      (check-equal "lisp-collapsed"
                   (getf (lisp-read-file:read-file *demo*) :mode)
                   "the child still answers")
      (check (< (elapsed-seconds start) 4) "answered without waiting for the timeout")))
  ;; A command line cannot carry a NUL: refused, instead of reading another file.
  (with-client (:transport :cli)
    (check-reader-error "INVALID_ARGUMENT" (format nil "~A~C" *demo* (code-char 0))
                        (lambda ()
                          (lisp-read-file:read-file (format nil "~A~C" *demo* (code-char 0)))))
    (let ((condition (check-signals lisp-read-file:reader-error
                                    (lisp-read-file:read-file
                                     *demo* :name-pattern (format nil "area~Cx" (code-char 0))))))
      (when condition
        (check-equal "INVALID_ARGUMENT" (lisp-read-file:reader-error-code condition))
        (check (search "--name-pattern" (lisp-read-file:reader-error-message condition)))))
    (check-equal 0 (getf (getf (lisp-read-file:read-file *demo* :name-pattern
                                                         (string (code-char 27)))
                               :meta)
                         :expanded-forms)
                 "an ESC pattern over the CLI, as over MCP")))

(deftest integers-are-sent-in-decimal
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport :timeout 5)
      (let ((result (handler-case
                        (let ((*print-base* 16) (*print-radix* t))
                          (lisp-read-file:read-file *demo* :collapsed nil :offset 10 :limit 12
                                                           :line-numbers t))
                      (error (condition) condition))))
        (check (listp result) (format nil "~S: answered: ~A" transport result))
        (when (listp result)
          (check (eql 0 (search "11: (defclass shape" (getf result :content)))
                 (format nil "~S: from line 11: ~S" transport (getf result :content)))
          (check-equal 22 (getf (getf result :meta) :next-offset))))
      ;; The largest offset the program takes goes as digits, not as a float.
      (let ((result (lisp-read-file:read-file *demo* :offset (1- (expt 2 64)))))
        (check (search "past end of file" (getf result :content))
               (format nil "~S: ~S" transport (getf result :content)))))))

(defun fake-server ()
  "A program that does the MCP handshake, then answers the first request it reads with
a parse error and no id, and the next two, once both are read, with an invalid-request
error and a null id; then reads until its input ends. In a temporary file."
  (let ((file (merge-pathnames (format nil "lisp-read-file-fake-~D.sh" (random 1000000))
                               (uiop:temporary-directory))))
    (with-open-file (out file :direction :output :if-exists :supersede)
      (dolist (line '("#!/bin/sh"
                      "read -r line"
                      "id=$(printf '%s' \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')"
                      "printf '{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"fake\",\"version\":\"0\"}}}\\n' \"$id\""
                      "read -r line"
                      "read -r line"
                      "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Parse error: fake\"}}'"
                      "read -r line"
                      "read -r line"
                      "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid request: fake\"}}'"
                      ;; Standard output stays open: the child runs on.
                      "while read -r line; do :; done"))
        (write-line line out)))
    (uiop:run-program (list "chmod" "+x" (uiop:native-namestring file)))
    file))

(deftest an-error-without-an-id-fails-the-calls-in-flight
  (let ((program (fake-server)))
    (unwind-protect
         (let ((lisp-read-file:*program* (uiop:native-namestring program))
               (lisp-read-file:*root* *repository*)
               (lisp-read-file:*transport* :mcp)
               (lisp-read-file:*timeout* 3))
           (lisp-read-file:shutdown)
           (flet ((check-failure (result code)
                    (check (and (typep result 'lisp-read-file:server-failure)
                                (not (typep result 'lisp-read-file:server-timeout)))
                           (format nil "a SERVER-FAILURE, not a timeout: ~S ~A"
                                   (type-of result) result))
                    (when (typep result 'lisp-read-file:server-failure)
                      (check (search code (lisp-read-file:server-failure-message result))
                             (format nil "the message names ~A: ~A" code result)))))
             ;; One call in flight: it fails.
             (let ((start (get-internal-real-time)))
               (check-failure (handler-case (lisp-read-file:read-file *demo*)
                                (error (condition) condition))
                              "-32700")
               (check (< (elapsed-seconds start) 2) "at once"))
             ;; Two calls in flight: the error names neither, both fail.
             (let* ((threads (loop repeat 2
                                   collect (call-in-thread
                                            (lambda () (lisp-read-file:read-file *demo*)))))
                    (results (mapcar #'join-result threads)))
               (dolist (result results)
                 (check-failure result "-32600"))
               (check (every (lambda (result)
                               (and (typep result 'lisp-read-file:server-failure)
                                    (search "2 calls" (lisp-read-file:server-failure-message
                                                       result))))
                             results)
                      (format nil "the message says 2 calls failed: ~{~A~^; ~}" results)))
             (check (integerp (lisp-read-file:server-pid)) "the child still runs")))
      (lisp-read-file:shutdown)
      (delete-file program))))

(defun check-configuration-error (variable value thunk)
  "Check that THUNK signals CONFIGURATION-ERROR about VARIABLE holding VALUE."
  (let ((condition (handler-case (progn (funcall thunk) nil)
                     (error (c) c))))
    (check (and (typep condition 'lisp-read-file:configuration-error)
                (not (typep condition 'lisp-read-file:program-not-found)))
           (format nil "a CONFIGURATION-ERROR for ~S ~S: ~S ~A" variable value
                   (type-of condition) condition))
    (when (typep condition 'lisp-read-file:configuration-error)
      (check-equal variable (lisp-read-file:configuration-error-variable condition))
      (check-equal value (lisp-read-file:configuration-error-value condition))
      (check (search (let ((*package* (find-package '#:keyword))) (prin1-to-string variable))
                     (princ-to-string condition))
             (format nil "the report names the variable: ~A" condition)))))

(deftest wrong-settings-are-configuration-errors
  ;; No program at all: nothing is run.
  (with-client ()
    (let ((lisp-read-file:*program* "/nonexistent/lisp-read-file"))
      (dolist (transport '(:bogus nil "mcp"))
        (let ((lisp-read-file:*transport* transport))
          (check-configuration-error 'lisp-read-file:*transport* transport
                                     (lambda () (lisp-read-file:read-file *demo*)))))
      (dolist (transport '(:mcp :cli))
        (dolist (timeout '(0 -1 "5" 0.0))
          (let ((lisp-read-file:*transport* transport)
                (lisp-read-file:*timeout* timeout))
            (check-configuration-error 'lisp-read-file:*timeout* timeout
                                       (lambda () (lisp-read-file:read-file *demo*)))
            (check-configuration-error 'lisp-read-file:*timeout* timeout
                                       (lambda () (lisp-read-file:outline *demo*)))))
        (dolist (extra (list "--max-file-bytes" '(42) (list (string (code-char 0)))))
          (let ((lisp-read-file:*transport* transport)
                (lisp-read-file:*extra-arguments* extra))
            (check-configuration-error 'lisp-read-file:*extra-arguments* extra
                                       (lambda () (lisp-read-file:read-file *demo*))))))
      (let ((condition (check-signals lisp-read-file:program-not-found
                                      (lisp-read-file:read-file *demo*))))
        (check (typep condition 'lisp-read-file:configuration-error)
               "PROGRAM-NOT-FOUND is a CONFIGURATION-ERROR"))))
  ;; A wild *PROGRAM* is not found either (it was a raw error).
  (let ((lisp-read-file:*program* #p"/usr/bin/*")
        (lisp-read-file:*root* *repository*))
    (check-signals lisp-read-file:program-not-found (lisp-read-file:read-file *demo*))))

(deftest wild-paths-bad-roots-and-big-integers-are-invalid-arguments
  ;; No program at all: these never reach it.
  (let ((lisp-read-file:*program* "/nonexistent/lisp-read-file")
        (lisp-read-file:*root* *repository*))
    (dolist (transport '(:mcp :cli))
      (let ((lisp-read-file:*transport* transport))
        (check-reader-error "INVALID_ARGUMENT" "x/*.lisp"
                            (lambda () (lisp-read-file:read-file #p"x/*.lisp")))
        (dolist (root (list (list *repository* 42) 42 #p"/tmp/*/"
                            (format nil "/tmp~C" (code-char 0)) (list* *repository* "/tmp")))
          (check-reader-error "INVALID_ARGUMENT" *demo*
                              (lambda () (lisp-read-file:read-file *demo* :root root)))
          (let ((lisp-read-file:*root* root))
            (check-reader-error "INVALID_ARGUMENT" *demo*
                                (lambda () (lisp-read-file:read-file *demo*)))))
        (dolist (arguments `((:limit ,(expt 10 30)) (:limit ,(expt 2 64)) (:limit 0)
                             (:offset ,(expt 2 64)) (:offset -1) (:context-lines -1)
                             (:context-lines 2.5) (:offset 1/2)))
          (let ((condition (handler-case (progn (apply #'lisp-read-file:read-file *demo*
                                                       arguments)
                                                nil)
                             (lisp-read-file:reader-error (c) c))))
            (check (and condition
                        (equal "INVALID_ARGUMENT" (lisp-read-file:reader-error-code condition))
                        (equal *demo* (lisp-read-file:reader-error-path condition))
                        (search "18446744073709551615"
                                (lisp-read-file:reader-error-message condition)))
                   (format nil "~S: INVALID_ARGUMENT naming the range: ~A" arguments
                           condition))))))
    (check-reader-error "INVALID_ARGUMENT" "x/*.lisp"
                        (lambda () (lisp-read-file:outline #p"x/*.lisp")))
    (check-reader-error "INVALID_ARGUMENT" *demo*
                        (lambda () (lisp-read-file:outline *demo* :root (list 42))))))

(deftest missing-program-names-the-variable
  (dolist (program '("no-such-lisp-read-file-program" "/nonexistent/lisp-read-file"))
    (dolist (transport '(:mcp :cli))
      (let ((lisp-read-file:*program* program)
            (lisp-read-file:*transport* transport)
            (lisp-read-file:*root* *repository*))
        (let ((condition (check-signals lisp-read-file:program-not-found
                                        (lisp-read-file:read-file *demo*))))
          (when condition
            (check-equal program (lisp-read-file:program-not-found-program condition))
            (check-equal 'lisp-read-file:*program*
                         (lisp-read-file:program-not-found-variable condition))
            (check (search "LISP-READ-FILE:*PROGRAM*" (princ-to-string condition)))))))))

(deftest a-root-that-is-no-directory-is-invalid-argument
  (dolist (transport '(:mcp :cli))
    (with-client (:root "/nonexistent/root/" :transport transport)
      (let ((condition (check-signals lisp-read-file:reader-error
                                      (lisp-read-file:read-file "a.lisp"))))
        (when condition
          (check-equal "INVALID_ARGUMENT" (lisp-read-file:reader-error-code condition))
          (check (search "/nonexistent/root" (lisp-read-file:reader-error-message
                                              condition))))))))

;;; Settings

(deftest extra-arguments-reach-the-program
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (lisp-read-file:read-file *demo*)
      (let ((pid (lisp-read-file:server-pid))
            (lisp-read-file:*extra-arguments* '("--max-file-bytes" "100")))
        ;; Over the cap, the collapsed view is a note naming the window to ask for.
        (check (search "over the 100-byte size cap"
                       (getf (lisp-read-file:read-file *demo*) :content))
               "the cap reached the program")
        (when (eq transport :mcp)
          ;; Another command line, another child.
          (check (/= pid (lisp-read-file:server-pid)) "a child with the new arguments"))))))

(deftest several-roots
  (with-client (:root (list *repository* *library*))
    (let* ((file (merge-pathnames "alexandria-1/lists.lisp" *library*))
           (result (lisp-read-file:read-file file)))
      ;; Outside the first root: named by its absolute path.
      (check-equal (uiop:native-namestring (truename file)) (getf result :path))
      (check-equal *demo* (getf (lisp-read-file:read-file *demo*) :path))
      (check (find "flatten" (lisp-read-file:outline file)
                   :key (lambda (item) (getf item :name)) :test #'equal)
             "outline reads below the second root too"))))

;;; The child process

(deftest one-child-per-root-reused-across-calls
  (with-client ()
    (lisp-read-file:read-file *demo*)
    (let ((pid (lisp-read-file:server-pid)))
      (check (integerp pid))
      (lisp-read-file:read-file *demo* :limit 1)
      (check-equal pid (lisp-read-file:server-pid))
      ;; Another root, another child.
      (lisp-read-file:read-file "alexandria-1/lists.lisp" :root *library*)
      (let ((other (lisp-read-file:server-pid :root *library*)))
        (check (and (integerp other) (/= other pid))))
      (check-equal pid (lisp-read-file:server-pid)))))

(deftest killed-child-is-restarted
  (with-client ()
    (lisp-read-file:read-file *demo*)
    (let ((pid (lisp-read-file:server-pid)))
      (check-equal 0 (signal-process pid "KILL"))
      (let ((result (lisp-read-file:read-file *demo* :name-pattern "fast-path")))
        (check-equal 1 (getf (getf result :meta) :expanded-forms)))
      (let ((new (lisp-read-file:server-pid)))
        (check (and (integerp new) (/= new pid)) "a new child runs")))))

(deftest child-killed-during-a-call-is-restarted-and-the-call-answered
  (with-client ()
    (lisp-read-file:read-file *demo*)
    (let ((pid (lisp-read-file:server-pid)))
      ;; Stopped, the child cannot answer: the call is in flight when it is killed.
      (check-equal 0 (stop-process pid))
      (let ((thread (call-in-thread (lambda ()
                                      (lisp-read-file:read-file *demo* :name-pattern "shape")))))
        (sleep 0.5)
        (check-equal 0 (signal-process pid "KILL"))
        (let ((result (join-result thread)))
          (check (listp result) (format nil "the call was answered: ~A" result))
          (when (listp result)
            (check-equal "lisp-collapsed" (getf result :mode))
            (check (search "(defclass shape ()" (getf result :content))))))
      (let ((new (lisp-read-file:server-pid)))
        (check (and (integerp new) (/= new pid))
               (format nil "a new child runs: ~S, the killed one was ~S" new pid))))))

(deftest two-threads-call-at-once
  (with-client ()
    (lisp-read-file:shutdown)
    (let* ((start (bt:make-semaphore))
           (calls 25)
           (threads
             (loop for (pattern expanded marker) in '(("^area$" 3 "20:   (* (size s) (size s)))")
                                                      ("with-shape" 1 "34:        (incf *count*)"))
                   collect (let ((pattern pattern) (expanded expanded) (marker marker))
                             (call-in-thread
                              (lambda ()
                                (bt:wait-on-semaphore start)
                                (loop repeat calls
                                      for result = (lisp-read-file:read-file
                                                    *demo* :name-pattern pattern)
                                      count (and (eql expanded (getf (getf result :meta)
                                                                     :expanded-forms))
                                                 (search marker (getf result :content))))))))))
      ;; Both start together, on the first use: one child must come out of it.
      (bt:signal-semaphore start :count 2)
      (dolist (thread threads)
        (check-equal calls (join-result thread)))
      (check (integerp (lisp-read-file:server-pid))))))

(deftest timeout-stops-a-child-that-does-not-answer
  (with-client ()
    (lisp-read-file:read-file *demo*)
    (let ((pid (lisp-read-file:server-pid))
          (started (get-internal-real-time)))
      (check-equal 0 (stop-process pid))
      (let ((condition (let ((lisp-read-file:*timeout* 1))
                         (check-signals lisp-read-file:server-timeout
                                        (lisp-read-file:read-file *demo*)))))
        (when condition
          (check-equal 1 (lisp-read-file:server-timeout-seconds condition))
          (check (typep condition 'lisp-read-file:server-failure))))
      (check (< (/ (- (get-internal-real-time) started) internal-time-units-per-second) 10)
             "the timeout fired within 10 s")
      (check (not (process-exists-p pid)) "the stopped child was killed")
      (check-equal 9 (getf (getf (lisp-read-file:read-file *demo*) :meta) :total-forms))
      (check (/= pid (lisp-read-file:server-pid)) "the next call started a new child"))))

(defun silent-program ()
  "A program that never answers: a shell script that sleeps, in a temporary file."
  (let ((file (merge-pathnames (format nil "lisp-read-file-silent-~D.sh" (random 1000000))
                               (uiop:temporary-directory))))
    (with-open-file (out file :direction :output :if-exists :supersede)
      (format out "#!/bin/sh~%exec sleep 60~%"))
    (uiop:run-program (list "chmod" "+x" (uiop:native-namestring file)))
    file))

(deftest timeout-of-a-program-that-never-answers
  (let ((program (silent-program)))
    (unwind-protect
         (dolist (transport '(:mcp :cli))
           (let ((lisp-read-file:*program* (uiop:native-namestring program))
                 (lisp-read-file:*transport* transport)
                 (lisp-read-file:*root* *repository*)
                 (lisp-read-file:*timeout* 0.5))
             (check-signals lisp-read-file:server-timeout (lisp-read-file:read-file *demo*))))
      (delete-file program))))

(deftest cli-transport-gives-the-same-data
  (with-client ()
    (lisp-read-file:shutdown)
    (let ((cli (let ((lisp-read-file:*transport* :cli))
                 (lisp-read-file:read-file *demo* :name-pattern "area" :comments :preceding)))
          (mcp (lisp-read-file:read-file *demo* :name-pattern "area" :comments :preceding)))
      (check (same-keys-p (plist-keys mcp) cli))
      (dolist (key '(:path :mode :content))
        (check-equal (getf mcp key) (getf cli key)))
      (dolist (key (demo-meta-keys))
        (check-equal (getf (getf mcp :meta) key) (getf (getf cli :meta) key))))
    (lisp-read-file:shutdown)
    (let ((lisp-read-file:*transport* :cli))
      (lisp-read-file:read-file *demo* :collapsed nil :offset 30 :limit 2 :line-numbers t)
      (check-equal nil (lisp-read-file:server-pid) "the CLI mode starts no child"))))

(deftest shutdown-stops-the-children
  (with-client ()
    (lisp-read-file:read-file *demo*)
    (let ((pid (lisp-read-file:server-pid)))
      (lisp-read-file:shutdown)
      (check-equal nil (lisp-read-file:server-pid))
      (check (not (process-exists-p pid)) "the child is gone"))))

;;; LISP-READ-FILE, the drop-in for cl-mcp's function.
;;;
;;; Matched against cl-mcp, https://github.com/cl-ai-project/cl-mcp, commit
;;; 414d504b5db805d41859d501dbabeb1d999d9709 (2026-06-28), src/lisp-read-file.lisp,
;;; function CL-MCP/SRC/LISP-READ-FILE:LISP-READ-FILE:
;;;
;;;   (defun lisp-read-file (path &key (collapsed t) name-pattern content-pattern offset
;;;                               limit (include-comments nil) (comment-context "preceding")
;;;                               readtable) ...)
;;;
;;; It returns an EQUAL hash table with exactly the keys "content" (string), "path"
;;; (string, relative to the project root), "mode" (string) and "meta" (an EQUAL hash
;;; table), whose keys depend on the mode:
;;;   lisp-collapsed (a Lisp file, collapsed): total_forms, expanded_forms, comment_lines,
;;;                   blank_lines, source_lines -- integers
;;;   raw (collapsed NIL): truncated (T or NIL), total_lines (integer)
;;;   text-filtered (a text file with content-pattern): truncated (T or NIL)
;;;   text-snippet (a text file, collapsed, no content-pattern): truncated, total_lines
;;; LIMIT defaults to 500 lines and applies to raw and text views only.

(defparameter *cl-mcp-meta-shapes*
  '(("lisp-collapsed" ("total_forms" integer) ("expanded_forms" integer)
     ("comment_lines" integer) ("blank_lines" integer) ("source_lines" integer))
    ("raw" ("truncated" boolean) ("total_lines" integer))
    ("text-filtered" ("truncated" boolean))
    ("text-snippet" ("truncated" boolean) ("total_lines" integer)))
  "The meta keys and value types of cl-mcp's result, by mode.")

(defun hash-keys (table)
  "The keys of TABLE."
  (loop for key being the hash-keys of table collect key))

(defun check-cl-mcp-shape (result mode)
  "Check RESULT key by key against cl-mcp's result shape for MODE."
  (check (hash-table-p result) "the result is a hash table")
  (when (hash-table-p result)
    (check-equal 'equal (hash-table-test result))
    (check (null (set-exclusive-or '("content" "path" "mode" "meta") (hash-keys result)
                                   :test #'equal))
           (format nil "result keys: ~S" (hash-keys result)))
    (check (stringp (gethash "content" result)))
    (check (stringp (gethash "path" result)))
    (check-equal mode (gethash "mode" result))
    (let ((meta (gethash "meta" result))
          (shape (cdr (assoc mode *cl-mcp-meta-shapes* :test #'equal))))
      (check (hash-table-p meta) "meta is a hash table")
      (when (hash-table-p meta)
        (check-equal 'equal (hash-table-test meta))
        (check (null (set-exclusive-or (mapcar #'first shape) (hash-keys meta) :test #'equal))
               (format nil "~A meta keys: ~S" mode (hash-keys meta)))
        (loop for (key type) in shape
              do (check (typep (gethash key meta) type)
                        (format nil "meta ~A is of type ~A: ~S" key type
                                (gethash key meta))))))))

(deftest compat-lambda-list-is-cl-mcp-s
  ;; Every keyword of cl-mcp's lambda list is accepted (an unknown one would be an error).
  (with-client ()
    (let ((result (lisp-read-file:lisp-read-file *demo* :collapsed t :name-pattern "area"
                                                        :content-pattern "incf" :offset nil
                                                        :limit nil :include-comments t
                                                        :comment-context "all"
                                                        :readtable :interpol-syntax)))
      (check-cl-mcp-shape result "lisp-collapsed")))
  ;; And the lambda list itself, where the implementation tells it.
  #+sbcl
  (progn
    (require :sb-introspect)
    (check-equal (symbol-names '(path &key (collapsed t) name-pattern content-pattern offset
                                 limit (include-comments nil) (comment-context "preceding")
                                 readtable))
                 (symbol-names (uiop:symbol-call '#:sb-introspect '#:function-lambda-list
                                                 #'lisp-read-file:lisp-read-file)))))

(defun symbol-names (tree)
  "TREE with every symbol but NIL and T replaced by its name, to compare lambda lists
written in different packages."
  (cond ((member tree '(nil t)) tree)
        ((symbolp tree) (symbol-name tree))
        ((consp tree) (cons (symbol-names (car tree)) (symbol-names (cdr tree))))
        (t tree)))

(deftest compat-collapsed-lisp-file
  (with-client ()
    (let* ((result (lisp-read-file:lisp-read-file *demo*))
           (meta (gethash "meta" result)))
      (check-cl-mcp-shape result "lisp-collapsed")
      (check-equal *demo* (gethash "path" result))
      (check-equal (file-text "fixtures/demo/demo.collapsed.txt") (gethash "content" result))
      (check-equal 9 (gethash "total_forms" meta))
      (check-equal 0 (gethash "expanded_forms" meta))
      ;; demo.lisp: 35 lines, 8 blank, 2 comment lines (;;;; at line 1, ;; at line 32).
      (check-equal 35 (gethash "source_lines" meta))
      (check-equal 8 (gethash "blank_lines" meta))
      (check-equal 2 (gethash "comment_lines" meta)))
    (let ((expanded (lisp-read-file:lisp-read-file *demo* :name-pattern "area")))
      (check-cl-mcp-shape expanded "lisp-collapsed")
      (check-equal 3 (gethash "expanded_forms" (gethash "meta" expanded)))
      (check (search "(* (size s) (size s))" (gethash "content" expanded))))
    (let ((comments (lisp-read-file:lisp-read-file *demo* :include-comments t)))
      (check (search ";;;; demo.lisp" (gethash "content" comments))))
    (let ((no-comments (lisp-read-file:lisp-read-file *demo* :comment-context "all")))
      ;; include-comments is NIL by default: comment-context alone shows none.
      (check (not (search ";;;;" (gethash "content" no-comments)))))))

(deftest compat-raw-and-text-modes
  (with-client ()
    (let ((raw (lisp-read-file:lisp-read-file *demo* :collapsed nil :offset 0 :limit 3)))
      (check-cl-mcp-shape raw "raw")
      (check-equal t (gethash "truncated" (gethash "meta" raw)))
      (check-equal 35 (gethash "total_lines" (gethash "meta" raw)))
      (check (search "(defpackage #:demo" (gethash "content" raw))))
    (let ((whole (lisp-read-file:lisp-read-file *demo* :collapsed nil :name-pattern "area")))
      (check-cl-mcp-shape whole "raw")
      (check-equal nil (gethash "truncated" (gethash "meta" whole)))
      (check-equal (file-text *demo*) (gethash "content" whole)))
    (let ((filtered (lisp-read-file:lisp-read-file *demo-text* :content-pattern "defclass")))
      (check-cl-mcp-shape filtered "text-filtered")
      (check (search "(defclass shape" (gethash "content" filtered))))
    (let ((snippet (lisp-read-file:lisp-read-file *demo-text* :name-pattern "area" :limit 2)))
      (check-cl-mcp-shape snippet "text-snippet")
      (check-equal t (gethash "truncated" (gethash "meta" snippet)))
      (check-equal 10 (gethash "total_lines" (gethash "meta" snippet))))))

(deftest compat-refuses-what-cl-mcp-refuses
  (with-client ()
    (dolist (arguments '((42) ("") (*demo* :collapsed :yes) (*demo* :include-comments 1)
                         (*demo* :comment-context "some") (*demo* :offset -1)
                         (*demo* :limit 0) (*demo* :limit 2.5)))
      (let ((arguments (subst *demo* '*demo* arguments)))
        (let ((condition (handler-case (progn (apply #'lisp-read-file:lisp-read-file arguments)
                                              nil)
                           (lisp-read-file:reader-error (c) c))))
          (check (and condition (equal "INVALID_ARGUMENT"
                                       (lisp-read-file:reader-error-code condition)))
                 (format nil "INVALID_ARGUMENT for ~S" arguments)))))
    (check-reader-error "NOT_FOUND" "nope.lisp"
                        (lambda () (lisp-read-file:lisp-read-file "nope.lisp")))))

(deftest compat-hints-are-cl-mcp-arguments
  ;; The drop-in answers cl-mcp's callers, who pass its tool's JSON arguments: its hints
  ;; are written so (offset=3), in both transports, while READ-FILE's are keywords.
  (dolist (transport '(:mcp :cli))
    (with-client (:transport transport)
      (let ((raw (lisp-read-file:lisp-read-file *demo* :collapsed nil :offset 0 :limit 3)))
        (check (search "Use offset=3 to read more." (gethash "content" raw))
               (format nil "~S: ~A" transport (gethash "content" raw))))
      (let ((paged (lisp-read-file:read-file *demo* :collapsed nil :limit 3)))
        (check (search "Use :offset 3 to read more." (getf paged :content))
               (format nil "~S: ~A" transport (getf paged :content)))))))
