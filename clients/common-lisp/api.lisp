;;;; api.lisp -- READ-FILE and OUTLINE

(in-package #:lisp-read-file)

;;; A request is a list of (JSON-NAME . VALUE) in the order of the tool's parameters,
;;; built once and sent either as MCP tool arguments or as CLI flags.

(defun path-string (path)
  "PATH, a string or pathname, as the string the program takes; INVALID_ARGUMENT for
anything else or an empty path."
  (let ((string (typecase path
                  (string path)
                  (pathname (uiop:native-namestring path))
                  (t (invalid-argument nil "path must be a string or a pathname, not ~S"
                                       path)))))
    (when (zerop (length string))
      (invalid-argument string "empty path; pass the path of a file to read"))
    string))

(defun check-argument (path name value type)
  "VALUE when it is of TYPE (or NIL, meaning the program's default); INVALID_ARGUMENT
naming the Lisp keyword NAME otherwise."
  (unless (or (null value) (typep value type))
    (invalid-argument path "~A must be of type ~S, not ~S" name type value))
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

(defun read-request (path collapsed name-pattern content-pattern offset limit comments
                     context-lines line-numbers)
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
                  (cons "offset" (check-argument path :offset offset 'integer))
                  (cons "limit" (check-argument path :limit limit 'integer))
                  (cons "comments" (comments-string path comments))
                  (cons "context_lines" (check-argument path :context-lines context-lines
                                                        'integer))
                  (cons "line_numbers" (and line-numbers t))))))

(defun request-arguments (request)
  "REQUEST as the MCP tool's arguments, a JSON object."
  (apply #'json-object
         (loop for (name . value) in request
               collect name
               collect (if (member name '("collapsed" "line_numbers") :test #'equal)
                           (json-boolean value)
                           value))))

(defun request-flags (request)
  "REQUEST as the CLI's flags, without the path (it comes last, after `--`). Values
are joined to their flag with = so that a pattern starting with - stays a value."
  (loop for (name . value) in request
        append (cond ((equal name "path") '())
                     ((equal name "collapsed") (if value '() '("--raw")))
                     ((equal name "line_numbers") '("--line-numbers"))
                     (t (list (format nil "--~A=~A" (cli-flag name) value))))))

(defun cli-flag (name)
  "The CLI flag for the tool parameter NAME."
  (cond ((equal name "context_lines") "context")
        (t (substitute #\- #\_ name))))

(defun read-file (path &key (collapsed t) name-pattern content-pattern offset limit
                         comments context-lines line-numbers (root *root*))
  "Read PATH through the lisp-read-file program and return its result as a property
list: (:PATH STRING :MODE STRING :CONTENT STRING :META PLIST).

PATH is relative to the first root, or absolute inside a root. ROOT (default *ROOT*,
itself defaulting to the current directory) is the directory, or list of directories,
the program may read.

COLLAPSED (default T): the collapsed outline of a Lisp file, one line per definition;
NIL gives raw lines. NAME-PATTERN, CONTENT-PATTERN: regexes (Rust syntax) of the
definitions to show whole, verbatim; for a text file CONTENT-PATTERN greps with
CONTEXT-LINES lines of context. OFFSET (0-based line) and LIMIT (lines) page the view;
:META's :NEXT-OFFSET continues it. COMMENTS: :NONE, :HEADERS, :PRECEDING or :ALL.
LINE-NUMBERS numbers the raw view.

:MODE is \"lisp-collapsed\", \"raw\" or \"text-filtered\". :META holds :TOTAL-FORMS,
:EXPANDED-FORMS, :TRUNCATED, :NEXT-OFFSET, :TOTAL-LINES, :BYTE-LENGTH, :MTIME-MS,
:DIAGNOSTICS (a list of plists) and, for a file that is not UTF-8,
:FALLBACK-ENCODING. A failure signals READER-ERROR with the program's code."
  (let ((request (read-request path collapsed name-pattern content-pattern offset limit
                               comments context-lines line-numbers))
        (roots (roots root)))
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
  (let ((file (to-lisp (cli-json '("outline" "--json") (path-string path) (roots root)))))
    (values (getf file :items) file)))
