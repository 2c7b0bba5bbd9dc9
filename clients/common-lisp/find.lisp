;;;; find.lisp -- LISP-FIND: definitions and references across a project

(in-package #:lisp-read-file)

(defun find-request (path name name-pattern symbol text callers callees kinds features
                     include-body detail offset limit)
  "The request for LISP-FIND's arguments, checked: ((\"path\" . STRING) ...), with only
the arguments given. Exactly one of NAME, NAME-PATTERN, SYMBOL, TEXT, CALLERS and
CALLEES."
  (let* ((path (path-string path))
         (modes (loop for (keyword value) on (list :name name :name-pattern name-pattern
                                                   :symbol symbol :text text
                                                   :callers callers :callees callees)
                        by #'cddr
                      when value collect keyword)))
    (unless (= 1 (length modes))
      (invalid-argument path "give exactly one of :name (a definition's name), ~
                              :name-pattern (a regex or text on definition names), :symbol ~
                              (whose uses to list), :text (which forms contain it), ~
                              :callers (which definitions call it) and :callees (what the ~
                              definitions of that name call)~@[, ~
                              not ~{~(~S~)~^ and ~}~]" modes))
    (flet ((designator (keyword value)
             ;; A name or symbol may be given as a Lisp symbol: its name, in lower case.
             (cond ((or (null value) (stringp value)) value)
                   ((symbolp value) (string-downcase (symbol-name value)))
                   (t (invalid-argument path "~(~S~) must be a string or a symbol, not ~S"
                                        keyword value)))))
      (remove-if (lambda (entry) (null (cdr entry)))
                 (list (cons "path" path)
                       (cons "name" (designator :name name))
                       (cons "name_pattern"
                             (check-argument path :name-pattern name-pattern 'string))
                       (cons "symbol" (designator :symbol symbol))
                       (cons "text" (check-argument path :text text 'string))
                       (cons "callers" (designator :callers callers))
                       (cons "callees" (designator :callees callees))
                       (cons "kinds" (names-list path :kinds kinds))
                       (cons "features" (names-list path :features features))
                       (cons "include_body" (and include-body t))
                       (cons "detail" (find-detail-string path detail))
                       (cons "offset" (check-count path :offset offset 0))
                       (cons "limit" (check-count path :limit limit 1))
                       (cons "hint_style" *hint-style*))))))

(defun find-detail-string (path detail)
  "DETAIL, :NAMES or \"names\", as the tool's string; INVALID_ARGUMENT otherwise."
  (when detail
    (unless (equal (name-string detail) "names")
      (invalid-argument path ":detail must be :names (or NIL for the lines of each ~
                              entry), not ~S" detail))
    "names"))

(defun lisp-find (path &key name name-pattern symbol text callers callees kinds features
                         include-body detail offset limit (root *root*))
  "Search PATH (a file, a directory's Lisp files, recursively, or an .asd file's
directory; \".\" is the first root) through the lisp-read-file program, and return the
result as a property list: (:PATH :MODE :CONTENT :DEFINITIONS, :REFERENCES, :CALLERS or
:CALLEES :FILES-SEARCHED :FILES-SKIPPED :TOTAL :TRUNCATED :NEXT-OFFSET).

Exactly one of: NAME, the definitions named exactly this (a string, or a symbol by its
name; case-insensitive; \"(setf foo)\" too), with the names a form makes without spelling
them (a structure's accessors, a slot's readers: :KIND says which, :FORM the form);
NAME-PATTERN, the definitions whose name matches this regex or contains this text;
SYMBOL, every use of the symbol as a token, grouped by enclosing form (:DEFINITION T for
the forms that define it); TEXT, the forms whose source text contains this literal text,
strings and comments included, with the lines holding it; CALLERS, the definitions whose
code calls this symbol as a function (operator position, #'foo, funcall or apply of 'foo),
methods one by one, each with the lines of its calls; CALLEES, for the definitions named
this, the definitions of the scope their code calls and, apart, the names called that
the scope does not define.

KINDS: only definitions (or uses in top-level forms) with these operators, a list of
strings or symbols. FEATURES: leave out what #+/#- excludes under these features.
INCLUDE-BODY: each definition's :BODY, verbatim. DETAIL :NAMES: :CONTENT lists each
entry as LINE: KIND NAME only, the cheap answer to which definitions use or call a symbol
(the plists are the same). OFFSET (the first entry, 0-based, from
:NEXT-OFFSET) and LIMIT (lines of :CONTENT) page the result. ROOT as for READ-FILE.

:DEFINITIONS is a list of plists (:FILE :LINE :END-LINE :COLUMN :KIND :NAME :SIGNATURE,
and :BODY, :FORM when present); :REFERENCES of plists (:FILE :LINE :END-LINE :KIND
:NAME :SIGNATURE :DEFINITION :USES), each use (:LINE :COLUMN :TEXT); :CALLERS of plists
(:FILE :LINE :END-LINE :KIND :NAME :SIGNATURE :PACKAGE :CALLS), each call as a use;
:CALLEES of plists (:FILE :LINE :END-LINE :KIND :NAME :SIGNATURE :CALLEES :OUTSIDE), each
callee (:NAME :CALLS :DEFINITIONS). Failures and bad arguments are as for READ-FILE."
  (let* ((request (find-request path name name-pattern symbol text callers callees kinds
                                features include-body detail offset limit))
         (path (cdr (assoc "path" request :test #'equal)))
         (roots (roots root path)))
    (check-configuration)
    (to-lisp
     (ecase *transport*
       (:mcp (mcp-call-tool roots "lisp-find" (request-arguments request)))
       (:cli (cli-json (list* "find" "--json" (request-flags request)) path roots))))))
