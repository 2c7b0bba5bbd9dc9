;;;; api.lisp -- READ-FILE and OUTLINE

(in-package #:lisp-read-file)

;;; A request is a list of (JSON-NAME . VALUE) in the order of the tool's parameters,
;;; built once and sent either as MCP tool arguments or as CLI flags.

;;; The program writes its hints (what to pass next: an offset, a form read raw, a window,
;;; kinds) in the syntax of whoever reads them: here the keyword arguments of READ-FILE and
;;; LISP-FIND, so that a hint followed literally is a call of the same function.
(defvar *hint-style* "lisp"
  "The program's hint_style for the calls: \"lisp\" (:offset 15), or \"arguments\"
(offset=15) for the cl-mcp drop-in, whose callers pass its tool's JSON arguments.")

(defun path-string (path)
  "PATH, a string or pathname, as the string the program takes; INVALID_ARGUMENT for
anything else, a wild pathname or an empty path."
  (let ((string (typecase path
                  (string path)
                  (pathname
                   (when (wild-pathname-p path)
                     (invalid-argument (ignore-errors (namestring path))
                                       "path ~S is a wild pathname; pass a string or a ~
                                        pathname without wildcards (a native name with * ~
                                        ? or [ as a string, or parsed by ~
                                        UIOP:PARSE-NATIVE-NAMESTRING)" path))
                   (handler-case (uiop:native-namestring path)
                     (error ()
                       (invalid-argument (ignore-errors (namestring path))
                                         "path ~S has no native file name; pass a string ~
                                          or a pathname of a file" path))))
                  (t (invalid-argument nil "path must be a string or a pathname, not ~S"
                                       path)))))
    (when (zerop (length string))
      (invalid-argument string "empty path; pass the path of a file to read"))
    string))

(defconstant +count-limit+ (1- (expt 2 64))
  "The largest line count or offset the program takes (its counters are 64-bit).")

(defun check-argument (path name value type)
  "VALUE when it is of TYPE (or NIL, meaning the program's default); INVALID_ARGUMENT
naming the Lisp keyword NAME otherwise."
  (unless (or (null value) (typep value type))
    (invalid-argument path "~(~S~) must be of type ~S, not ~S" name type value))
  value)

(defun check-count (path name value minimum)
  "VALUE, an integer argument, when it is NIL (the program's default) or an integer from
MINIMUM to +COUNT-LIMIT+, the range the program takes; INVALID_ARGUMENT naming the Lisp
keyword NAME otherwise, so that no number the program would misread (a float, a number
it cannot hold) is sent."
  (unless (or (null value) (and (integerp value) (<= minimum value +count-limit+)))
    (invalid-argument path "~(~S~) must be an integer from ~D to ~D (or NIL for the program's ~
                            default), not ~S" name minimum +count-limit+ value))
  value)

(defun comments-string (path comments)
  "COMMENTS, a keyword or string among none, headers, preceding, all, as the tool's
string; INVALID_ARGUMENT otherwise."
  (when comments
    (let ((string (and (or (stringp comments) (symbolp comments))
                       (string-downcase (string comments)))))
      (unless (member string '("none" "headers" "preceding" "all") :test #'equal)
        (invalid-argument path ":comments must be one of :none, :headers, :preceding, ~
                                :all, not ~S" comments))
      string)))

(defun name-string (designator)
  "The program's text for a string designator: a string as it is, a character as a
string, a symbol (other than NIL) by its name in lower case (:DEFUN is \"defun\");
NIL for anything else."
  (typecase designator
    (string designator)
    (character (string designator))
    (symbol (and designator (string-downcase (symbol-name designator))))))

(defun names-list (path name value)
  "VALUE, a non-empty proper list of strings or symbols (operators, features), as a
list of strings; NIL for NIL (the program's default). INVALID_ARGUMENT naming the Lisp
keyword NAME otherwise: each name must be non-empty and without a comma (the command
line separates names with commas)."
  (when value
    (unless (and (proper-list-p value)
                 (every (lambda (item)
                          (let ((string (name-string item)))
                            (and string (plusp (length string)) (not (find #\, string)))))
                        value))
      (invalid-argument path "~(~S~) must be a list of names, each a string or a symbol, ~
                              non-empty and without a comma (e.g. (\"defun\" :defmacro)), ~
                              not ~S" name value))
    (mapcar #'name-string value)))

(defun strategy-list (path strategy)
  "STRATEGY checked: NIL (the program's default), :DEFAULT, :COMPLETE,
(:BYTE-RANGE START [END]) with integers from 0, or (:LINE-RANGE FIRST [LAST]) with
integers from 1, all at most +COUNT-LIMIT+; as a list (TYPE . INTEGERS).
INVALID_ARGUMENT otherwise."
  (flet ((bad ()
           (invalid-argument path ":strategy must be :default, :complete, (:byte-range ~
                                   START [END]) with integers from 0 or (:line-range FIRST ~
                                   [LAST]) with integers from 1, not ~S" strategy)))
    (cond ((null strategy) nil)
          ((member strategy '(:default :complete)) (list strategy))
          ((and (proper-list-p strategy) (<= 2 (length strategy) 3)
                (member (first strategy) '(:byte-range :line-range)))
           (let ((minimum (if (eq (first strategy) :byte-range) 0 1)))
             (unless (every (lambda (n) (and (integerp n) (<= minimum n +count-limit+)))
                            (rest strategy))
               (bad))
             strategy))
          (t (bad)))))

(defun strategy-json (strategy)
  "The tool's strategy object for STRATEGY, a list from STRATEGY-LIST."
  (destructuring-bind (type &optional start end) strategy
    (ecase type
      (:default (json-object "type" "default"))
      (:complete (json-object "type" "complete"))
      (:byte-range (json-object "type" "byteRange" "start" start "end" (or end :omit)))
      (:line-range (json-object "type" "lineRange" "startLine" start
                                "endLine" (or end :omit))))))

(defun strategy-flags (strategy)
  "The CLI's flags for STRATEGY, a list from STRATEGY-LIST."
  (destructuring-bind (type &optional start end) strategy
    (ecase type
      (:default (list "--strategy=default"))
      (:complete (list "--strategy=complete"))
      (:byte-range (list (format nil "--bytes=~D..~@[~D~]" start end)))
      (:line-range (list (format nil "--lines=~D..~@[~D~]" start end))))))

(defun read-request (path collapsed name-pattern content-pattern offset limit comments
                     context-lines line-numbers &optional kinds features strategy
                       before-context after-context max-count)
  "The request for READ-FILE's arguments, checked: ((\"path\" . STRING) ...), with
only the arguments given (besides path and collapsed)."
  (let ((path (path-string path)))
    (remove-if (lambda (entry)
                 ;; Arguments not given are left to the program's defaults; collapsed
                 ;; is always sent, its default (true) differs from NIL.
                 (and (not (equal (car entry) "collapsed")) (null (cdr entry))))
            (list (cons "path" path)
                  (cons "collapsed" (and collapsed t))
                  (cons "name_pattern" (check-argument path :name-pattern name-pattern 'string))
                  (cons "content_pattern"
                        (check-argument path :content-pattern content-pattern 'string))
                  (cons "offset" (check-count path :offset offset 0))
                  (cons "limit" (check-count path :limit limit 1))
                  (cons "comments" (comments-string path comments))
                  (cons "context_lines" (check-count path :context-lines context-lines 0))
                  (cons "before_context" (check-count path :before-context before-context 0))
                  (cons "after_context" (check-count path :after-context after-context 0))
                  (cons "max_count" (check-count path :max-count max-count 1))
                  (cons "line_numbers" (and line-numbers t))
                  (cons "kinds" (names-list path :kinds kinds))
                  (cons "features" (names-list path :features features))
                  (cons "strategy" (strategy-list path strategy))
                  (cons "hint_style" *hint-style*)))))

(defun request-arguments (request)
  "REQUEST as the MCP tool's arguments, a JSON object."
  (apply #'json-object
         (loop for (name . value) in request
               collect name
               collect (cond ((member name '("collapsed" "line_numbers" "include_body")
                                      :test #'equal)
                              (json-boolean value))
                             ((equal name "strategy") (strategy-json value))
                             (t value)))))

(defun request-flags (request)
  "REQUEST as the CLI's flags, without the path (it comes last, after `--`). Values
are joined to their flag with = so that a pattern starting with - stays a value;
integers are written in decimal whatever *PRINT-BASE* says."
  (loop for (name . value) in request
        append (cond ((equal name "path") '())
                     ((equal name "collapsed") (if value '() '("--raw")))
                     ((equal name "line_numbers") '("--line-numbers"))
                     ((equal name "include_body") '("--body"))
                     ((equal name "strategy") (strategy-flags value))
                     ((member name '("kinds" "features") :test #'equal)
                      (list (format nil "--~A=~{~A~^,~}" name value)))
                     ((integerp value) (list (format nil "--~A=~D" (cli-flag name) value)))
                     (t (list (format nil "--~A=~A" (cli-flag name) value))))))

(defun cli-flag (name)
  "The CLI flag for the tool parameter NAME."
  (cond ((equal name "context_lines") "context")
        (t (substitute #\- #\_ name))))

(defun read-file (path &key (collapsed t) name-pattern content-pattern offset limit
                         comments context-lines line-numbers kinds features strategy
                         before-context after-context max-count (root *root*))
  "Read PATH through the lisp-read-file program and return its result as a property
list: (:PATH STRING :MODE STRING :CONTENT STRING :META PLIST).

PATH is relative to the first root, or absolute inside a root. ROOT (default *ROOT*,
itself defaulting to the current directory) is the directory, or list of directories,
the program may read.

COLLAPSED (default T): the collapsed outline of a Lisp file, one line per definition;
NIL gives raw lines. NAME-PATTERN, CONTENT-PATTERN: regexes (Rust syntax) of the
definitions to show whole, verbatim; for a text file CONTENT-PATTERN greps with
CONTEXT-LINES lines of context (BEFORE-CONTEXT and AFTER-CONTEXT set each side, as grep
-B and -A; MAX-COUNT stops after that many matching lines, as grep -m, and :META's
:STOPPED-AT-MAX-COUNT then says so). OFFSET (0-based line) and LIMIT (lines) page the view;
:META's :NEXT-OFFSET continues it. OFFSET and CONTEXT-LINES are integers from 0,
LIMIT from 1, all at most 2^64-1. COMMENTS: :NONE, :HEADERS, :PRECEDING or :ALL.
LINE-NUMBERS numbers the raw view. KINDS: a list of operators (strings or symbols,
e.g. (:defun :defmacro)), the collapsed view and maps show only those forms. FEATURES: a
list of features (e.g. (:sbcl :x86-64)), forms #+/#- exclude under them are hidden.
STRATEGY: :DEFAULT (the views), :COMPLETE (the whole text, up to the size cap),
(:BYTE-RANGE START [END]) or (:LINE-RANGE FIRST [LAST]) (windows of files of any size).

:MODE is \"lisp-collapsed\", \"raw\", \"text-filtered\", or \"project\" for the map of a
directory or an .asd file. :META holds :TOTAL-FORMS,
:EXPANDED-FORMS, :TRUNCATED, :NEXT-OFFSET, :TOTAL-LINES, :BYTE-LENGTH, :MTIME-MS,
:DIAGNOSTICS (a list of plists) and, for a file that is not UTF-8,
:FALLBACK-ENCODING. A byte window that stops short of the end asked (at the size cap)
adds :NOTICE, the note that says so with the hint that reads on. A failure signals READER-ERROR with the program's code; a bad
argument (or root) is refused before anything is sent, as READER-ERROR
INVALID_ARGUMENT, and a bad *TRANSPORT*, *TIMEOUT* or *EXTRA-ARGUMENTS* as
CONFIGURATION-ERROR."
  (let* ((request (read-request path collapsed name-pattern content-pattern offset limit
                                comments context-lines line-numbers kinds features
                                strategy before-context after-context max-count))
         (roots (roots root (cdr (assoc "path" request :test #'equal)))))
    (check-configuration)
    (to-lisp
     (ecase *transport*
       (:mcp (mcp-call-tool roots "lisp-read-file" (request-arguments request)))
       (:cli (cli-json (cons "--json" (request-flags request))
                       (cdr (assoc "path" request :test #'equal))
                       roots))))))

(defun outline (path &key (root *root*))
  "The top-level items of the Lisp file PATH, as a list of property lists, and as a
second value the whole file object (:PATH :BYTE-LENGTH :LINE-COUNT :ITEMS
:DIAGNOSTICS).

Every item has :KIND (\"form\", \"comment\", \"shebang\" or \"stray\"), :START and :END
(byte offsets, END exclusive), :START-LINE and :END-LINE. Forms add :OPERATOR, :NAME
(as written, or NIL), :CONDITIONALS, :SIGNATURE (the collapsed text) and :CHILDREN (the
items of a container such as EVAL-WHEN), and when present :DOC, :DEFINER,
:QUALIFIERS, :SPECIALIZERS. PATH and ROOT are as for READ-FILE; the file is outlined
as Lisp whatever its name. The MCP server has no outline tool, so this runs the
program once per call, whatever *TRANSPORT* says."
  (let* ((path (path-string path))
         (roots (roots root path)))
    (check-configuration :transport nil)
    (let ((file (to-lisp (cli-json '("outline" "--json") path roots))))
      (values (getf file :items) file))))
