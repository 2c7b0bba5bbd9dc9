;;;; json.lisp -- JSON in and out, and the Lisp data the functions return

(in-package #:lisp-read-file)

;;; Parsed JSON, as this file keeps it: objects are alists (string keys), arrays are
;;; vectors, true is T, false and null are NIL. Arrays as vectors keep an array of
;;; arrays apart from an object, and alists keep the program's key order.

(defun parse-json (string)
  "Parse the JSON text STRING into alists (objects) and vectors (arrays)."
  (let ((yason:*parse-json-arrays-as-vectors* t))
    (yason:parse string :object-as :alist
                        :json-booleans-as-symbols nil
                        :json-nulls-as-keyword nil)))

(defun json-get (object key)
  "The value of KEY (a string) in the parsed JSON OBJECT, or NIL."
  (cdr (assoc key object :test #'string=)))

(defun lisp-keyword (key)
  "The keyword for the JSON key KEY: \"total_forms\" is :TOTAL-FORMS."
  (intern (substitute #\- #\_ (string-upcase key)) '#:keyword))

(defun to-lisp (value)
  "VALUE, parsed JSON, as the Lisp data the client returns: objects become property
lists with keyword keys in the program's order, arrays become lists; strings,
numbers, T and NIL stay."
  (cond ((stringp value) value)
        ((vectorp value) (map 'list #'to-lisp value))
        ;; Arrays are vectors, so a cons is always an object.
        ((consp value)
         ;; YASON conses each new key in front: reverse to get the program's order.
         (loop for (key . item) in (reverse value)
               collect (lisp-keyword key)
               collect (to-lisp item)))
        (t value)))

;;; Writing: requests are built from hash tables so that nested objects stay objects.
;;; The client writes its JSON itself rather than with YASON, whose encoder writes
;;; control characters other than \b \f \n \r \t as they are (invalid JSON: the
;;; server answers such a line with a parse error that names no request) and integers
;;; in the current *PRINT-BASE*. Every line the client writes is printable ASCII:
;;; anything else in a string is a \uXXXX escape (a surrogate pair above U+FFFF), and
;;; integers are exact decimal digits, however big.

(defun json-object (&rest keys-and-values)
  "A hash table for a JSON object from alternating KEYS-AND-VALUES (string keys);
entries whose value is :OMIT are left out."
  (let ((table (make-hash-table :test #'equal)))
    (loop for (key value) on keys-and-values by #'cddr
          unless (eq value :omit)
            do (setf (gethash key table) value))
    table))

(defun json-boolean (generalized-boolean)
  "The value that WRITE-JSON writes as JSON true or false (NIL would be written as
an empty array)."
  (if generalized-boolean :true :false))

(defun write-json (object)
  "OBJECT written as one line of JSON, in printable ASCII. OBJECT is :TRUE, :FALSE,
:NULL, a string, an integer, a hash table (an object; string keys), or a list or a
vector that is not a string (an array; NIL is the empty array)."
  (with-output-to-string (stream)
    (encode-json object stream)))

(defun encode-json (object stream)
  "Write OBJECT as JSON to STREAM (see WRITE-JSON)."
  (etypecase object
    ((eql :true) (write-string "true" stream))
    ((eql :false) (write-string "false" stream))
    ((eql :null) (write-string "null" stream))
    (string (encode-json-string object stream))
    ;; ~D writes decimal digits whatever *PRINT-BASE* and *PRINT-RADIX* say.
    (integer (format stream "~D" object))
    (hash-table
     (write-char #\{ stream)
     (let ((first t))
       (maphash (lambda (key value)
                  (unless first
                    (write-char #\, stream))
                  (setf first nil)
                  (encode-json-string key stream)
                  (write-char #\: stream)
                  (encode-json value stream))
                object))
     (write-char #\} stream))
    (sequence
     (write-char #\[ stream)
     (let ((first t))
       (map nil (lambda (item)
                  (unless first
                    (write-char #\, stream))
                  (setf first nil)
                  (encode-json item stream))
            object))
     (write-char #\] stream))))

(defun encode-json-string (string stream)
  "Write STRING as a JSON string to STREAM: \" and \\ escaped, printable ASCII as it
is, every other character (controls, DEL, anything beyond ASCII) as \\uXXXX."
  (write-char #\" stream)
  (loop for char across string
        for code = (char-code char)
        do (cond ((or (char= char #\") (char= char #\\))
                  (write-char #\\ stream)
                  (write-char char stream))
                 ((<= #x20 code #x7E) (write-char char stream))
                 ((< code #x10000) (format stream "\\u~4,'0X" code))
                 (t (let ((offset (- code #x10000)))
                      (format stream "\\u~4,'0X\\u~4,'0X"
                              (+ #xD800 (ash offset -10))
                              (+ #xDC00 (ldb (byte 10 0) offset)))))))
  (write-char #\" stream))
