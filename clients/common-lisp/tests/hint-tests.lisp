;;;; hint-tests.lisp -- every kind of hint the program prints, followed literally as the
;;;; keyword arguments of the function that got it, works, in both transports

(in-package #:lisp-read-file/tests)

;;; A hint is a run of keyword arguments in a note, e.g. "Use :offset 15 to continue."
;;; or "Read it whole with :collapsed nil :offset 29 :limit 6". Following it is calling
;;; the same function with those arguments in front of the call's own (the leftmost of
;;; a keyword given twice wins), so the test reads them with the Lisp reader, exactly as
;;; a caller would type them.

(defun write-corpus-file (directory relative text)
  "Write TEXT to the file RELATIVE under DIRECTORY, creating its directory."
  (let ((file (merge-pathnames relative directory)))
    (ensure-directories-exist file)
    (with-open-file (out file :direction :output :if-exists :supersede
                              :external-format :utf-8)
      (write-string text out))))

(defun repeated (count format-control)
  "FORMAT-CONTROL formatted with each K below COUNT, concatenated."
  (with-output-to-string (out)
    (dotimes (k count)
      (format out format-control k))))

(defun make-hint-corpus ()
  "A fresh directory of files whose reads print every kind of hint; its truename."
  (let ((dir (uiop:ensure-directory-pathname
              (format nil "~Alrf-cl-hints-~D/" (uiop:temporary-directory)
                      (random 1000000000 (make-random-state t))))))
    (flet ((w (relative text) (write-corpus-file dir relative text)))
      ;; 1,500 lines, about 30 KB: over a 10,000-byte cap, under 2,000 lines.
      (w "big.lisp" (repeated 1500 "(defun f~D (x) x)~%"))
      (w "api.lisp"
         (concatenate 'string
                      (format nil "(in-package :api)~%~%")
                      (repeated 40 "(defun filler-~D (x)~%  (list x ~:*~D))~%~%")
                      (format nil "(defun wanted (a b)~%  \"Doc.\"~%  (handler-case (+ a b)~
                                   ~%    (error () nil)))~%~%(defun wanted-too ()~%  1)~%")))
      (w "three.lisp" (format nil "(a) (b) (c)~%(d)~%"))
      (w "notes.txt" (repeated 50 "line ~D TODO~%"))
      (w "long.txt" (format nil "~A~%" (make-string 5000 :initial-element #\x)))
      (w "progn.lisp" (format nil "(progn~%~A)~%" (repeated 5001 "(f)~*~%")))
      (dotimes (k 3)
        (w (format nil "proj/p~D.lisp" k)
           (with-output-to-string (out)
             (dotimes (j 5)
               (format out "(defun p~D-~D (x)~%  \"Doc of p~D-~D.\"~%  (used x))~%" k j k j)))))
      (w "withbig/small.lisp" (format nil "(defun f1 () (f1))~%"))
      ;; Over find's own bound (32 times the cap), so that the search skips it.
      (w "withbig/big.lisp" (repeated 20000 "(defun f~D (x) x)~%"))
      ;; Over find's collection budget of 200,000 entries and uses: 100,030 forms of one
      ;; use each (one form past the budget alone would be answered with its uses cut).
      (w "huge/uses.lisp"
         (format nil "~A(defun a () (a))~%" (repeated 100030 "(progn a)~*~%"))))
    (truename dir)))

(defparameter *hint-cases*
  '((lisp-read-file:read-file 10000 "big.lisp")
    (lisp-read-file:read-file 10000 "big.lisp" :name-pattern "f1")
    (lisp-read-file:read-file 10000 "big.lisp" :name-pattern "f1" :content-pattern "x")
    (lisp-read-file:read-file 10000 "api.lisp" :name-pattern "^wanted$" :limit 2)
    (lisp-read-file:read-file 10000 "api.lisp" :name-pattern "^wanted" :limit 5)
    (lisp-read-file:read-file 10000 "api.lisp" :limit 3)
    (lisp-read-file:read-file 10000 "three.lisp" :limit 2)
    (lisp-read-file:read-file 10000 "api.lisp" :collapsed nil :limit 3)
    (lisp-read-file:read-file 10000 "api.lisp" :limit 3 :strategy (:line-range 1))
    (lisp-read-file:read-file 10000 "notes.txt" :content-pattern "TODO" :limit 2)
    (lisp-read-file:read-file 10000 "long.txt")
    ;; A byte window cut at the cap: its hint is in :NOTICE, the content being the bytes.
    (lisp-read-file:read-file 10000 "big.lisp" :strategy (:byte-range 0 20000))
    ;; A text file over the cap is grepped streamed: its page continues.
    (lisp-read-file:read-file 100 "notes.txt" :content-pattern "TODO" :limit 2)
    (lisp-read-file:read-file 10000 "notes.txt" :content-pattern "TODO" :limit 2
                              :max-count 3 :before-context 0)
    (lisp-read-file:read-file 100 "notes.txt" :content-pattern "TODO" :limit 2
                              :max-count 3 :after-context 1)
    ;; A container's children past what it lists.
    (lisp-read-file:read-file 1048576 "progn.lisp")
    ;; The budget steps of a map.
    (lisp-read-file:read-file 10000 "proj" :limit 4)
    (lisp-read-file:read-file 10000 "proj" :limit 10)
    (lisp-read-file:lisp-find 10000 "proj" :symbol "used" :limit 1)
    (lisp-read-file:lisp-find 10000 "proj" :symbol "used" :detail :names :limit 2)
    ;; A skipped file; find's collection budget.
    (lisp-read-file:lisp-find 10000 "withbig" :symbol "f1")
    (lisp-read-file:lisp-find 1048576 "huge" :symbol "a"))
  "Each case: (FUNCTION SIZE-CAP PATH . ARGUMENTS).")

(defun notes (text)
  "The notes of TEXT: each bracketed part, [ to the next ], without the brackets."
  (loop with start = 0
        for open = (position #\[ text :start start)
        for close = (and open (position #\] text :start (1+ open)))
        while close
        collect (subseq text (1+ open) close)
        do (setf start (1+ close))))

(defun skip-blanks (text start)
  "The position of the first character of TEXT from START that is not a blank."
  (or (position-if-not (lambda (c) (member c '(#\Space #\Tab #\Newline))) text :start start)
      (length text)))

(defun read-hint-value (text start)
  "The argument value written at START in TEXT and the position after it, or NIL when
what is there is not a value (a word of the sentence, punctuation). A quoted list is the
list."
  (let ((*read-eval* nil) (*package* (find-package '#:lisp-read-file/tests)))
    (multiple-value-bind (value end)
        (handler-case (read-from-string text t nil :start start)
          (error () nil))
      (cond ((null end) nil)
            ((and (consp value) (eq (first value) 'quote)) (values (second value) end))
            ((or (integerp value) (stringp value) (null value)) (values value end))))))

(defun note-hints (note)
  "The hints of NOTE, each a list: a plist of keyword arguments, or (:FILES-SKIPPED)
for a hint that names where the result lists the skipped files."
  (let ((hints '()) (start 0))
    (loop
      (let ((colon (search " :" note :start2 start)))
        (unless colon (return))
        (let ((at (1+ colon)) (plist '()))
          ;; A run of KEYWORD VALUE pairs.
          (loop
            (unless (and (< at (length note)) (char= (char note at) #\:)) (return))
            (multiple-value-bind (keyword after)
                (let ((*read-eval* nil))
                  (handler-case (read-from-string note t nil :start at)
                    (error () nil)))
              (unless (and after (keywordp keyword)) (return))
              (when (eq keyword :files-skipped)
                (push (list :files-skipped) hints)
                (setf at after)
                (return))
              (multiple-value-bind (value end) (read-hint-value note (skip-blanks note after))
                (unless end (return))
                (setf plist (append plist (list keyword value))
                      at (skip-blanks note end)))))
          (when plist (push plist hints))
          (setf start (max (1+ colon) (min at (length note)))))))
    (reverse hints)))

(defun dropped-keywords (note)
  "The keywords NOTE says to leave out: \"windows without :a and :b:\"."
  (let ((at (search "windows without " note)))
    (when at
      (let* ((start (+ at (length "windows without ")))
             ;; The list ends at the colon that introduces the windows.
             (end (search ": " note :start2 start)))
        (loop for word in (uiop:split-string (subseq note start end) :separator " ")
              when (and (plusp (length word)) (char= (char word 0) #\:))
                collect (intern (string-upcase (string-right-trim ":" (subseq word 1)))
                                :keyword))))))

(defun without-keywords (plist keywords)
  "PLIST without the entries of KEYWORDS."
  (loop for (key value) on plist by #'cddr
        unless (member key keywords) append (list key value)))

(defun call-case (function path arguments)
  "FUNCTION on PATH with ARGUMENTS: its result, or the condition it signalled."
  (handler-case (apply function path arguments)
    (error (condition) condition)))

(defun answered-p (result)
  "Whether RESULT is a successful answer with a non-empty content."
  (and (consp result)
       (plusp (length (string-trim '(#\Space #\Newline) (or (getf result :content) ""))))))

(deftest every-hint-followed-as-keyword-arguments-works
  (let ((corpus (make-hint-corpus)))
    (unwind-protect
         (dolist (transport '(:mcp :cli))
           (loop for (function cap path . arguments) in *hint-cases*
                 do (with-client (:root corpus :transport transport :timeout 120)
                      (let* ((lisp-read-file:*extra-arguments*
                               (list "--max-file-bytes" (princ-to-string cap)))
                             (case (format nil "~S ~S ~S ~S" transport function path
                                           arguments))
                             (result (call-case function path arguments))
                             (text (if (consp result)
                                       (concatenate 'string (getf result :content)
                                                    (or (getf result :notice) ""))
                                       ""))
                             (hints (loop for note in (notes text)
                                          for dropped = (dropped-keywords note)
                                          append (mapcar (lambda (h) (cons dropped h))
                                                         (note-hints note)))))
                        (check (consp result) (format nil "~A: ~A" case result))
                        (check hints (format nil "~A printed no hint: ~A" case text))
                        (loop for (dropped . hint) in hints
                              do (if (equal hint '(:files-skipped))
                                     (check (getf result :files-skipped)
                                            (format nil "~A: :files-skipped is empty" case))
                                     (let ((followed
                                             (call-case function path
                                                        (append hint
                                                                (without-keywords
                                                                 arguments dropped)))))
                                       (check (answered-p followed)
                                              (format nil "~A: following ~S gave ~A"
                                                      case hint followed)))))))))
      (uiop:delete-directory-tree corpus :validate t))))
