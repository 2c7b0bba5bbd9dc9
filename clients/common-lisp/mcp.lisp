;;;; mcp.lisp -- one long-lived `lisp-read-file mcp` child process per root

(in-package #:lisp-read-file)

;;; The client speaks MCP over the child's standard input and output: newline-delimited
;;; JSON-RPC 2.0. A reader thread per child reads every line the child writes and hands
;;; each reply to the thread waiting for it, so that several threads can have calls in
;;; flight on one child at once (the server computes up to 4 at a time).

(defparameter *protocol-version* "2025-06-18"
  "The MCP protocol version sent in the initialize request.")

(defparameter *client-version* "0.1.0"
  "The version of this client, sent as clientInfo.")

(defstruct (connection (:constructor make-connection (roots command process)))
  "A child process serving ROOTS, started with COMMAND, and what waits for it."
  roots
  command
  process
  (lock (bt:make-lock "lisp-read-file connection"))
  ;; Writes have their own lock: a writer may block on a full pipe, and the reader
  ;; thread must still be able to take LOCK to deliver replies meanwhile.
  (write-lock (bt:make-lock "lisp-read-file writes"))
  (waiters (make-hash-table))
  (next-id 0)
  (alive t)
  (stderr-lines '())
  (stderr-thread nil))

(defstruct (waiter (:constructor make-waiter ()))
  "A call waiting for its reply: the reader thread stores REPLY and signals SEMAPHORE.
SENT is true once its request is being written; FAILURE is the message of a
SERVER-FAILURE for a call that gets no reply of its own (see FAIL-CALLS-IN-FLIGHT)."
  (semaphore (bt:make-semaphore :name "lisp-read-file reply"))
  (reply nil)
  (sent nil)
  (failure nil))

(define-condition child-died (error)
  ((connection :initarg :connection :reader child-died-connection))
  (:documentation "Internal: the child ended before it answered. The call is made once
more on a new child; only a second death reaches the caller, as SERVER-FAILURE."))

(defvar *connections* (make-hash-table :test #'equal)
  "The connections by their list of roots.")

(defvar *connections-lock* (bt:make-lock "lisp-read-file connections")
  "Guards *CONNECTIONS*, so that two threads never start two children for one root.")

;;; Reading what the child writes

(defun read-messages (connection)
  "The body of a connection's reader thread: handle each line the child writes until
its standard output ends, then mark the connection dead."
  (let ((stream (uiop:process-info-output (connection-process connection))))
    (unwind-protect
         (loop for line = (handler-case (read-line stream nil nil)
                            (error () nil))
               while line
               do (handle-line connection line))
      (mark-dead connection)
      (ignore-errors (close stream)))))

(defun handle-line (connection line)
  "Dispatch LINE, one line of the child's output: a reply goes to its waiter, a request
of the server is answered, an error reply without an id fails the calls in flight, a
notification or anything else is ignored."
  (let ((message (ignore-errors (parse-json line))))
    (when (consp message)
      (let ((id (json-get message "id"))
            (method (json-get message "method")))
        (cond ((and method id) (answer-request connection id method))
              (method nil)
              (id (deliver connection id message))
              ((json-get message "error")
               (fail-calls-in-flight connection (json-get message "error"))))))))

(defun fail-calls-in-flight (connection failure)
  "The server answered a line it could not read as a request (a parse error, an invalid
request) with the JSON-RPC error FAILURE and a null id: no reply will come for the
request that line was. It cannot be told which call that was, so every call whose
request was written and that has no reply yet fails with a SERVER-FAILURE saying so,
rather than wait for *TIMEOUT* (or forever). The child stays: it is well."
  (bt:with-lock-held ((connection-lock connection))
    (let* ((waiters (loop for waiter being the hash-values of (connection-waiters connection)
                          when (and (waiter-sent waiter) (null (waiter-reply waiter))
                                    (null (waiter-failure waiter)))
                            collect waiter))
           (message (format nil "the program could not read a request of this client: ~
                                 JSON-RPC error ~A, ~A, with no request id~:[~;; ~D calls ~
                                 were in flight on this child and all of them fail~]"
                            (json-get failure "code") (json-get failure "message")
                            (rest waiters) (length waiters))))
      (dolist (waiter waiters)
        (setf (waiter-failure waiter) message)
        (bt:signal-semaphore (waiter-semaphore waiter))))))

(defun deliver (connection id message)
  "Hand MESSAGE, the reply to request ID, to the thread waiting for it."
  (bt:with-lock-held ((connection-lock connection))
    (let ((waiter (gethash id (connection-waiters connection))))
      (when waiter
        (setf (waiter-reply waiter) message)
        (bt:signal-semaphore (waiter-semaphore waiter))))))

(defun mark-dead (connection)
  "Note that the child of CONNECTION ended and wake every thread waiting for it."
  (bt:with-lock-held ((connection-lock connection))
    (setf (connection-alive connection) nil)
    (loop for waiter being the hash-values of (connection-waiters connection)
          do (bt:signal-semaphore (waiter-semaphore waiter)))))

(defun answer-request (connection id method)
  "Answer the request ID of METHOD that the server sent: `roots/list` with the roots,
`ping` with an empty result, anything else with method not found."
  (send-message
   connection
   (cond ((equal method "roots/list")
          (json-object "jsonrpc" "2.0" "id" id
                       "result" (json-object "roots" (mapcar #'root-json
                                                             (connection-roots connection)))))
         ((equal method "ping")
          (json-object "jsonrpc" "2.0" "id" id "result" (json-object)))
         (t
          (json-object "jsonrpc" "2.0" "id" id
                       "error" (json-object "code" -32601
                                            "message" (format nil "Method not found: ~A"
                                                              method)))))))

(defun root-json (root)
  "The MCP Root object for ROOT, a directory name."
  (json-object "uri" (concatenate 'string "file://" (percent-encode root))
               "name" (subseq root (1+ (or (position #\/ root :from-end t) -1)))))

(defun percent-encode (string)
  "STRING with every octet of its UTF-8 form but unreserved characters and / written
as %XX, as a file URI needs."
  (with-output-to-string (out)
    (loop for char across string
          do (if (or (alphanumericp char) (find char "-._~/"))
                 (if (< (char-code char) 128)
                     (write-char char out)
                     (write-octets (utf-8-octets (char-code char)) out))
                 (write-octets (utf-8-octets (char-code char)) out)))))

(defun write-octets (octets stream)
  "Write OCTETS to STREAM as %XX escapes."
  (dolist (octet octets)
    (format stream "%~2,'0X" octet)))

(defun utf-8-octets (code)
  "The UTF-8 octets of the character code CODE."
  (flet ((tail (shift) (logior #x80 (ldb (byte 6 shift) code))))
    (cond ((< code #x80) (list code))
          ((< code #x800) (list (logior #xC0 (ash code -6)) (tail 0)))
          ((< code #x10000) (list (logior #xE0 (ash code -12)) (tail 6) (tail 0)))
          (t (list (logior #xF0 (ash code -18)) (tail 12) (tail 6) (tail 0))))))

(defun collect-stderr (connection)
  "The body of a connection's standard error thread: keep the last lines the child
writes there, for the messages of SERVER-FAILURE and for start-up errors."
  (let ((stream (uiop:process-info-error-output (connection-process connection))))
    (unwind-protect
         (loop for line = (handler-case (read-line stream nil nil)
                            (error () nil))
               while line
               do (bt:with-lock-held ((connection-lock connection))
                    (push line (connection-stderr-lines connection))
                    (when (> (length (connection-stderr-lines connection)) 20)
                      (setf (connection-stderr-lines connection)
                            (subseq (connection-stderr-lines connection) 0 20)))))
      (ignore-errors (close stream)))))

(defun stderr-tail (connection)
  "The last lines the child of CONNECTION wrote on standard error, joined, or NIL."
  (let ((lines (bt:with-lock-held ((connection-lock connection))
                 (reverse (subseq (connection-stderr-lines connection)
                                  0 (min 4 (length (connection-stderr-lines connection))))))))
    (when lines
      (format nil "~{~A~^; ~}" lines))))

;;; Writing and waiting

(defun send-message (connection message &optional waiter)
  "Write MESSAGE as one line to the child of CONNECTION; WAITER, the waiter of a
request, is marked as sent just before."
  (let ((stream (uiop:process-info-input (connection-process connection)))
        (line (write-json message)))
    (bt:with-lock-held ((connection-write-lock connection))
      (when waiter
        ;; Under the write lock, so that a waiter is marked only when every line written
        ;; before its own is out; under the connection lock, which the reader thread
        ;; takes to read the mark.
        (bt:with-lock-held ((connection-lock connection))
          (setf (waiter-sent waiter) t)))
      (write-line line stream)
      (force-output stream))))

(defun register-waiter (connection)
  "A new request id and its waiter, registered on CONNECTION; CHILD-DIED when the
child has already ended."
  (bt:with-lock-held ((connection-lock connection))
    (unless (connection-alive connection)
      (error 'child-died :connection connection))
    (let ((id (incf (connection-next-id connection)))
          (waiter (make-waiter)))
      (setf (gethash id (connection-waiters connection)) waiter)
      (values id waiter))))

(defun request (connection method params)
  "Send the request METHOD with PARAMS to the child of CONNECTION and return the
result of its reply. Signals CHILD-DIED when the child ends first, SERVER-TIMEOUT
(after stopping the child) when no reply comes within *TIMEOUT* seconds."
  (multiple-value-bind (id waiter) (register-waiter connection)
    (unwind-protect
         (progn
           (handler-case (send-message connection (json-object "jsonrpc" "2.0" "id" id
                                                               "method" method
                                                               "params" params)
                                       waiter)
             ;; A pipe closed by a child that just died. The reader thread may not have
             ;; seen its end yet: mark it dead here, so the next attempt starts a new one.
             (error ()
               (mark-dead connection)
               (error 'child-died :connection connection)))
           (unless (bt:wait-on-semaphore (waiter-semaphore waiter) :timeout *timeout*)
             (stop-connection connection :now t)
             (mark-dead connection)
             (error 'server-timeout
                    :roots (connection-roots connection) :seconds *timeout*
                    :message (format nil "no answer to ~A within ~A seconds; the child ~
                                          process was stopped and the next call starts ~
                                          a new one" method *timeout*)))
           (let ((reply (waiter-reply waiter)))
             (when (and (null reply) (waiter-failure waiter))
               (error 'server-failure :roots (connection-roots connection)
                                      :message (waiter-failure waiter)))
             (reply-result connection method (or reply
                                                 (error 'child-died
                                                        :connection connection)))))
      (bt:with-lock-held ((connection-lock connection))
        (remhash id (connection-waiters connection))))))

(defun reply-result (connection method reply)
  "The result of REPLY; a JSON-RPC error becomes a SERVER-FAILURE."
  (let ((failure (json-get reply "error")))
    (when failure
      (error 'server-failure
             :roots (connection-roots connection)
             :message (format nil "JSON-RPC error ~A in ~A: ~A" (json-get failure "code")
                              method (json-get failure "message"))))
    (json-get reply "result")))

;;; Starting and stopping children

(defun mcp-command (roots)
  "The command line of the child process serving ROOTS."
  (append (list (program-file) "mcp") (root-arguments roots) *extra-arguments*))

(defun start-connection (roots command)
  "Start COMMAND, the child for ROOTS, and return its initialized connection."
  (let ((connection (make-connection roots command (launch command roots))))
    (setf (connection-stderr-thread connection)
          (bt:make-thread (lambda () (collect-stderr connection))
                          :name "lisp-read-file stderr"))
    (bt:make-thread (lambda () (read-messages connection)) :name "lisp-read-file reader")
    (let ((ready nil))
      (unwind-protect
           (progn
             (handler-case (initialize connection)
               (child-died () (start-up-failure connection)))
             (setf ready t))
        ;; A child that failed its handshake in any way is not left running.
        (unless ready
          (stop-connection connection :now t))))
    connection))

(defun initialize (connection)
  "The MCP handshake: the initialize request, then notifications/initialized. No roots
capability is declared: the roots are given on the command line."
  (request connection "initialize"
           (json-object "protocolVersion" *protocol-version*
                        "capabilities" (json-object)
                        "clientInfo" (json-object "name" "lisp-read-file.lisp"
                                                  "version" *client-version*)))
  (send-message connection (json-object "jsonrpc" "2.0"
                                        "method" "notifications/initialized")))

(defun start-up-failure (connection)
  "Signal why the child of CONNECTION ended before the handshake: its `CODE: message`
line (a root that is not a directory is INVALID_ARGUMENT) or a SERVER-FAILURE."
  (let ((status (kill-process (connection-process connection))))
    ;; The child is gone, so its standard error ends: wait for every line of it.
    (bt:join-thread (connection-stderr-thread connection))
    (let ((lines (reverse (connection-stderr-lines connection))))
      (error (if lines
                 (error-line-condition (first lines) (connection-roots connection))
                 (make-condition 'server-failure
                                 :roots (connection-roots connection)
                                 :message (format nil "the program exited with status ~A ~
                                                       before answering" status)))))))

(defun stop-connection (connection &key now)
  "Stop the child of CONNECTION: close its standard input, which makes it exit, and
unless NOW give it a second to do so before killing it."
  (let ((process (connection-process connection)))
    (bt:with-lock-held ((connection-write-lock connection))
      (ignore-errors (close (uiop:process-info-input process))))
    (unless now
      (loop repeat 100
            while (uiop:process-alive-p process)
            do (sleep 0.01)))
    (kill-process process)))

(defun connection-usable-p (connection command)
  "Whether CONNECTION's child is running and was started with COMMAND. Running means
its standard output is open, as the reader thread sees it: the process status of the
implementation is not asked, SBCL's can be stale while other children come and go. A
child that has just died but whose end is not yet seen fails the call with
CHILD-DIED, and the call is made again on a new one."
  (and (connection-alive connection)
       (equal (connection-command connection) command)))

(defun live-connection (roots)
  "A running, initialized connection for ROOTS: the one there is, or a new one."
  (let ((command (mcp-command roots)))
    (bt:with-lock-held (*connections-lock*)
      (let ((connection (gethash roots *connections*)))
        (if (and connection (connection-usable-p connection command))
            connection
            (progn
              (when connection
                (remhash roots *connections*)
                (stop-connection connection :now t))
              (setf (gethash roots *connections*) (start-connection roots command))))))))

(defun call-with-restart (roots method params)
  "Send the request METHOD with PARAMS to the child for ROOTS. A child that dies before
it answers is replaced and the request sent once more (reads change nothing)."
  (flet ((attempt () (request (live-connection roots) method params)))
    (handler-case (attempt)
      (child-died ()
        (handler-case (attempt)
          (child-died (condition)
            (error 'server-failure
                   :roots roots
                   :message (format nil "the child process died twice during one call~
                                         ~@[; its standard error says: ~A~]"
                                    (stderr-tail (child-died-connection condition))))))))))

(defun mcp-call-tool (roots name arguments)
  "Call the tool NAME with ARGUMENTS (a hash table) on the child for ROOTS and return
its structured result, parsed; a tool error becomes a READER-ERROR."
  (let* ((result (call-with-restart roots "tools/call"
                                    (json-object "name" name "arguments" arguments)))
         (structured (json-get result "structuredContent")))
    (when (json-get result "isError")
      (error 'reader-error :code (or (json-get structured "code") "INTERNAL")
                           :path (json-get structured "path")
                           :message (or (json-get structured "message")
                                        (tool-text result))))
    ;; The view is said once, as the text content (docs/mcp.md#results): put it back
    ;; where the result had it, after "mode".
    (let ((structured
            (if (and (consp structured) (null (assoc "content" structured :test #'string=)))
                (loop for cell in structured
                      collect cell
                      when (string= (car cell) "mode")
                        collect (cons "content" (view-text result)))
                structured))
          (notice (notice-text result)))
      ;; Parsed objects list their keys last first: the notice ends the property list.
      (if (and (consp structured) notice)
          (acons "notice" notice structured)
          structured))))

(defun notice-text (result)
  "The text blocks of the tool RESULT after the view (a byte window cut short of the end
asked says so, with the hint that reads on), concatenated, or NIL when there are none."
  (let ((texts (loop for item across (or (json-get result "content") #())
                     for text = (json-get item "text")
                     when text collect text)))
    (when (rest texts)
      (format nil "~{~A~}" (rest texts)))))

(defun view-text (result)
  "The view: the first text content of the tool RESULT (a byte window cut short of the
end asked says so in a second block, docs/guard.md#size-cap)."
  (loop for item across (or (json-get result "content") #())
        for text = (json-get item "text")
        when text return text
        finally (return "")))

(defun tool-text (result)
  "The text content of the tool RESULT, concatenated."
  (format nil "~{~A~}" (loop for item across (or (json-get result "content") #())
                             collect (or (json-get item "text") ""))))

;;; Public

(defun server-pid (&key (root *root*))
  "The process id of the running child process for ROOT (default *ROOT*), or NIL when
none runs."
  (let ((connection (bt:with-lock-held (*connections-lock*)
                      (gethash (roots root) *connections*))))
    (when (and connection (connection-alive connection))
      (uiop:process-info-pid (connection-process connection)))))

(defun shutdown ()
  "Stop every child process this client started. The next call starts a new one."
  (let ((connections (bt:with-lock-held (*connections-lock*)
                       (prog1 (loop for connection being the hash-values of *connections*
                                    collect connection)
                         (clrhash *connections*)))))
    (mapc #'stop-connection connections)
    (values)))
