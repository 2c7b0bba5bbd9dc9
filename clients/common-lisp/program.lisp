;;;; program.lisp -- finding the program, the roots, and one-shot runs of the CLI

(in-package #:lisp-read-file)

(defvar *program* "lisp-read-file"
  "The lisp-read-file program: a file name, or a command name looked up on PATH.")

(defvar *root* nil
  "The directory (or a list of directories) the program may read, as pathname
designators; relative paths given to the functions start at the first one. NIL means
the current directory of the process (UIOP:GETCWD) at the time of the call.")

(defvar *transport* :mcp
  "How calls reach the program: :MCP (the default) talks to one long-lived
`lisp-read-file mcp` child process per root; :CLI runs the program once per call.
Another value is a CONFIGURATION-ERROR.")

(defvar *timeout* 30
  "Seconds to wait for an answer of the program, a positive real number, or NIL for no
limit. When they pass the child process is stopped and SERVER-TIMEOUT is signalled; the
next call starts a new process. Another value is a CONFIGURATION-ERROR.")

(defvar *extra-arguments* '()
  "Extra arguments for the program, as a list of strings, added after the mode's own:
for example (\"--max-file-bytes\" \"4194304\").")

;;; The program

(defun executable-file-p (pathname)
  "The true name of PATHNAME when it names an existing file, else NIL."
  (let ((found (ignore-errors (probe-file pathname))))
    (and found (not (uiop:directory-pathname-p found)) found)))

(defun search-path (name)
  "The file NAME in the first directory of the PATH variable that holds it, or NIL."
  (loop for directory in (uiop:split-string (or (uiop:getenv "PATH") "")
                                            :separator (string (uiop:inter-directory-separator)))
        for file = (and (plusp (length directory))
                        (executable-file-p
                         (merge-pathnames name (uiop:ensure-directory-pathname
                                                (uiop:parse-native-namestring directory)))))
        when file return file))

(defun program-file ()
  "The native file name of the program *PROGRAM* names; PROGRAM-NOT-FOUND when none."
  (let* ((program *program*)
         (file (and (or (stringp program)
                        (and (pathnamep program) (not (wild-pathname-p program))))
                    (plusp (length (namestring program)))
                    (ignore-errors
                     (if (and (stringp program) (not (find #\/ program)))
                         (search-path program)
                         (executable-file-p (uiop:ensure-pathname program
                                                                  :defaults (uiop:getcwd)
                                                                  :want-non-wild t)))))))
    (unless file
      (error 'program-not-found :program program :value program
                                :expected "the file name of the program or a command on PATH"))
    (uiop:native-namestring file)))

;;; The other settings, checked before anything is sent or run

(defun proper-list-p (object)
  "Whether OBJECT is a proper list: NIL-terminated, not circular."
  (and (listp object) (handler-case (list-length object) (error () nil)) t))

(defparameter *transports* '(:mcp :cli)
  "The values *TRANSPORT* accepts.")

(defun check-configuration (&key (transport t))
  "Signal CONFIGURATION-ERROR, naming the variable, when *TIMEOUT*, *EXTRA-ARGUMENTS*
or (when TRANSPORT is true) *TRANSPORT* has a value it does not accept."
  (unless (typep *timeout* '(or null (real (0))))
    (configuration-error '*timeout* "a positive real number of seconds, or NIL for no limit"))
  (unless (and (proper-list-p *extra-arguments*)
               (every (lambda (argument)
                        (and (stringp argument) (not (find (code-char 0) argument))))
                      *extra-arguments*))
    (configuration-error '*extra-arguments*
                         "a list of strings without NUL characters, the program's extra arguments"))
  (when (and transport (not (member *transport* *transports*)))
    (configuration-error '*transport* (format nil "one of ~{~S~^, ~}" *transports*))))

;;; Roots

(defun root-directory (designator path)
  "DESIGNATOR, a pathname designator for a directory, as an absolute native directory
name without the trailing slash, the form the program's --root takes. INVALID_ARGUMENT
(about the read of PATH) for anything else: a wild pathname, a NUL character."
  (flet ((refuse (why)
           (invalid-argument path "the root ~S ~A; a root is a directory name (a string or ~
                                   a pathname without wildcards), or a list of them, given ~
                                   as :ROOT or LISP-READ-FILE:*ROOT*"
                             designator why)))
    (let ((pathname (typecase designator
                      (string (if (find (code-char 0) designator)
                                  (refuse "contains a NUL character")
                                  (uiop:parse-native-namestring designator)))
                      (pathname (if (wild-pathname-p designator)
                                    (refuse "is a wild pathname")
                                    designator))
                      (t (refuse "is not a string or a pathname")))))
      (let ((name (handler-case (uiop:native-namestring
                                 (uiop:ensure-absolute-pathname
                                  (uiop:ensure-directory-pathname pathname) (uiop:getcwd)))
                    (error () (refuse "has no native directory name")))))
        (if (and (> (length name) 1) (char= (char name (1- (length name))) #\/))
            (subseq name 0 (1- (length name)))
            name)))))

(defun roots (&optional (root *root*) path)
  "ROOT (or *ROOT*) as a non-empty list of --root directory names; INVALID_ARGUMENT
(about the read of PATH) when it is not a root or a proper list of them."
  (cond ((null root) (list (root-directory (uiop:getcwd) path)))
        ((consp root)
         (unless (proper-list-p root)
           (invalid-argument path "the roots ~S are not a proper list of directory names"
                             root))
         (mapcar (lambda (designator) (root-directory designator path)) root))
        (t (list (root-directory root path)))))

(defun root-arguments (roots)
  "The --root arguments for ROOTS."
  (loop for root in roots append (list "--root" root)))

;;; Waiting with a timeout

(defun call-with-timeout (seconds roots thunk on-timeout)
  "Call THUNK in a new thread and return its values, or call ON-TIMEOUT and signal
SERVER-TIMEOUT when it has not returned within SECONDS. A condition THUNK signals is
re-signalled here."
  (let ((done (bt:make-semaphore :name "lisp-read-file call"))
        (values nil)
        (failure nil))
    (bt:make-thread (lambda ()
                      (unwind-protect
                           (handler-case (setf values (multiple-value-list (funcall thunk)))
                             (error (condition) (setf failure condition)))
                        (bt:signal-semaphore done)))
                    :name "lisp-read-file one-shot")
    (unless (bt:wait-on-semaphore done :timeout seconds)
      (funcall on-timeout)
      (error 'server-timeout :roots roots :seconds seconds
                             :message (format nil "no answer within ~A seconds; the ~
                                                   program was stopped" seconds)))
    (when failure
      (error failure))
    (values-list values)))

;;; One-shot runs of the CLI

(defun read-stream (stream)
  "Everything STREAM has until its end, as a string."
  (with-output-to-string (out)
    (loop for line = (read-line stream nil nil)
          while line
          do (write-line line out))))

(defun run-program-once (arguments path roots)
  "Run the program with ARGUMENTS, the --root arguments of ROOTS, *EXTRA-ARGUMENTS*
and then PATH (after `--`, so that no path is taken for a flag); return its standard
output, standard error and exit status. Waits at most *TIMEOUT* seconds."
  (check-command-line arguments path)
  (let* ((command (append (list (program-file)) arguments (root-arguments roots)
                          *extra-arguments* (list "--" path)))
         (process (launch command roots :input nil))
         (errors nil))
    (flet ((run ()
             ;; Standard error is read on its own thread so that a full pipe never
             ;; blocks the program while this thread waits for standard output.
             (let ((reader (bt:make-thread
                            (lambda () (setf errors (read-stream
                                                     (uiop:process-info-error-output process))))
                            :name "lisp-read-file stderr")))
               (unwind-protect
                    (let ((output (read-stream (uiop:process-info-output process))))
                      (bt:join-thread reader)
                      (values output errors (uiop:wait-process process)))
                 (uiop:close-streams process)))))
      (call-with-timeout *timeout* roots #'run
                         (lambda () (kill-process process))))))

(defun check-command-line (arguments path)
  "INVALID_ARGUMENT when PATH or one of ARGUMENTS holds a NUL character: a command line
cannot carry it (the argument would end there and the program read another file or
pattern). Over MCP such an argument reaches the program, which answers for it."
  (let ((nul (code-char 0)))
    (when (find nul path)
      (invalid-argument path "the path contains a NUL character (U+0000); pass the path of ~
                              a file"))
    (let ((argument (find-if (lambda (argument) (find nul argument)) arguments)))
      (when argument
        (invalid-argument path "the argument ~S contains a NUL character (U+0000), which ~
                                the program's command line cannot carry; remove it, or use ~
                                LISP-READ-FILE:*TRANSPORT* :MCP"
                          (subseq argument 0 (position #\= argument)))))))

(defun launch (command roots &key (input :stream))
  "Start COMMAND with pipes for its standard output and error, and INPUT (a pipe by
default) for its standard input; SERVER-FAILURE when it cannot be started."
  (handler-case
      (uiop:launch-program command :input input :output :stream :error-output :stream
                                   :external-format :utf-8)
    (error (condition)
      (error 'server-failure :roots roots
                             :message (format nil "cannot start ~A: ~A"
                                              (first command) condition)))))

(defun kill-process (process)
  "Stop PROCESS at once (also when it is stopped by a signal), reap it and return its
exit status. Its streams are left to the threads that read them, which close them."
  (ignore-errors (uiop:terminate-process process :urgent t))
  (ignore-errors (uiop:wait-process process)))

(defun error-line-condition (line roots)
  "The condition for LINE, the program's `CODE: message` on standard error: a
READER-ERROR with that code, or a SERVER-FAILURE when LINE has another form."
  (let ((colon (search ": " line)))
    (if (and colon (plusp colon)
             (every (lambda (c) (or (upper-case-p c) (char= c #\_))) (subseq line 0 colon)))
        (make-condition 'reader-error :code (subseq line 0 colon)
                                      :message (subseq line (+ colon 2)))
        (make-condition 'server-failure :roots roots :message line))))

(defun cli-json (arguments path roots)
  "Run the program with ARGUMENTS (which include --json) on PATH and return its parsed
JSON output. An error object becomes a READER-ERROR; a usage error (exit status 2) a
READER-ERROR INVALID_ARGUMENT with the program's words."
  (multiple-value-bind (output errors status) (run-program-once arguments path roots)
    (let ((first-line (subseq output 0 (position #\Newline output))))
      (case status
        ((0 1)
         (let* ((object (handler-case (parse-json first-line)
                          (error ()
                            (error 'server-failure :roots roots
                                                   :message (format nil "not JSON: ~A~@[; ~A~]"
                                                                    first-line errors)))))
                (failure (json-get object "error")))
           (when failure
             (error 'reader-error :code (json-get failure "code")
                                  :path (json-get object "path")
                                  :message (json-get failure "message")))
           ;; What the program said beside the result (a byte window cut short of the end
           ;; asked, with the hint that reads on), as over MCP.
           (let ((notice (string-trim '(#\Newline) (or errors ""))))
             (if (and (consp object) (plusp (length notice)))
                 (acons "notice" notice object)
                 object))))
        (2 (invalid-argument nil "~A" (string-trim '(#\Newline) (first-line-of errors))))
        (t (error 'server-failure :roots roots
                                  :message (format nil "exit status ~A~@[: ~A~]" status
                                                   (first-line-of errors))))))))

(defun first-line-of (text)
  "The first line of TEXT (without its newline), or NIL for NIL or empty TEXT."
  (when (plusp (length text))
    (subseq text 0 (position #\Newline text))))
