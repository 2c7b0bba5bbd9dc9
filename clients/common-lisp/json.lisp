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

(defun json-object (&rest keys-and-values)
  "A hash table for a JSON object from alternating KEYS-AND-VALUES (string keys);
entries whose value is :OMIT are left out."
  (let ((table (make-hash-table :test #'equal)))
    (loop for (key value) on keys-and-values by #'cddr
          unless (eq value :omit)
            do (setf (gethash key table) value))
    table))

(defun json-boolean (generalized-boolean)
  "The YASON value that writes GENERALIZED-BOOLEAN as JSON true or false (NIL would
be written as null)."
  (if generalized-boolean 'yason:true 'yason:false))

(defun write-json (object)
  "OBJECT written as one line of JSON."
  (with-output-to-string (stream)
    (yason:encode object stream)))
