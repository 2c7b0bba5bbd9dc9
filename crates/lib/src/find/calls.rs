//! The calls a form's code makes (docs/find.md#what-is-a-call): the symbols it uses as a
//! function, read from the source without evaluating or expanding anything.
//!
//! A call is a symbol in operator position of a list that is code, `#'sym` and
//! `(function sym)`, the quoted symbol of `(funcall 'sym ...)` / `(apply 'sym ...)`, and
//! `(setf (sym ...) ...)` (a call of `(setf sym)`). What is code is told by the shape of
//! the standard operators ([`shape`]): a `let` binding `(x (f))` is not a call of `x`, a
//! `case` clause's keys are data, a lambda list's default values are code. Quoted data
//! (`'(f x)`, `#(f)`) holds no call; a backquote template is read as code (a macro whose
//! expansion calls `f` is listed as calling it). A name that `flet`, `labels` or
//! `macrolet` binds is a local function in its scope: calls of it are not calls of the
//! global one.
//!
//! Linear in the form: one pass builds a tree of the form ([`Tree`]), one walk with an
//! explicit stack visits each node a bounded number of times; no recursion.

use crate::scan::{each_event_read, Event, Prefix};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// One call found: the operator's token `[start, end)`; `setf`: a call of `(setf sym)`.
/// `under`: the operator's token `[start, end)` of the form whose argument this call's
/// list is, when that operator has no standard shape: a function's argument is code, a
/// macro's may be anything (`(let-when (x (f)) ...)` binds `x`), so whether the list is
/// a call is known only once the operator is ([`super::callees`] asks the scope).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    pub start: usize,
    pub end: usize,
    pub setf: bool,
    pub under: Option<(usize, usize)>,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    List,
    Token,
    Atom,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    kind: Kind,
    start: usize,
    end: usize,
    /// Under `'` or a data `#` dispatch (`#(`, `#S(`): no code inside.
    quoted: bool,
    /// Under `#'`.
    function: bool,
    /// Under `,` (in a backquote template): computed, not written, so never read as a
    /// binding list or clause.
    unquoted: bool,
    first: u32,
    next: u32,
}

/// A form as a tree: nodes in an arena, children linked as siblings.
struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    /// The tree of `b[start..end]`: node 0 is a virtual list holding its data.
    fn build(
        b: &[u8],
        start: usize,
        end: usize,
        reads: &mut dyn FnMut(bool, &[u8]) -> bool,
    ) -> Tree {
        let root = Node {
            kind: Kind::List,
            start,
            end,
            quoted: false,
            function: false,
            unquoted: false,
            first: NONE,
            next: NONE,
        };
        let mut tree = Tree { nodes: vec![root] };
        // Open lists: (node, its last child); prefixes waiting for their datum.
        let mut open: Vec<(u32, u32)> = vec![(0, NONE)];
        let mut quoted = false;
        let mut function = false;
        let mut unquoted = false;
        each_event_read(b, start, end, reads, &mut |event| {
            let (kind, s, e) = match event {
                Event::Prefix(p, _) => {
                    quoted |= matches!(p, Prefix::Quote | Prefix::Data);
                    function |= p == Prefix::Function;
                    if p == Prefix::Comma {
                        // `',x` in a template: the `,x` is evaluated.
                        quoted = false;
                        unquoted = true;
                    }
                    return ControlFlow::Continue(());
                }
                Event::Close(at) => {
                    if open.len() > 1 {
                        let (node, _) = open.pop().unwrap_or((0, NONE));
                        tree.nodes[node as usize].end = at + 1;
                    }
                    quoted = false;
                    function = false;
                    unquoted = false;
                    return ControlFlow::Continue(());
                }
                Event::Open(at) => (Kind::List, at, end),
                Event::Token(s, e) => (Kind::Token, s, e),
                Event::Atom(s, e) => (Kind::Atom, s, e),
            };
            let id = tree.nodes.len() as u32;
            tree.nodes.push(Node {
                kind,
                start: s,
                end: e,
                quoted,
                function,
                unquoted,
                first: NONE,
                next: NONE,
            });
            quoted = false;
            function = false;
            unquoted = false;
            let (parent, last) = open.last_mut().expect("the root is never closed");
            if *last == NONE {
                tree.nodes[*parent as usize].first = id;
            } else {
                tree.nodes[*last as usize].next = id;
            }
            *last = id;
            if kind == Kind::List {
                open.push((id, NONE));
            }
            ControlFlow::Continue(())
        });
        tree
    }

    fn node(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    /// The children of `id`, in order.
    fn children(&self, id: u32) -> Children<'_> {
        let at = if id == NONE {
            NONE
        } else {
            self.node(id).first
        };
        Children { tree: self, at }
    }

    fn next(&self, id: u32) -> u32 {
        if id == NONE {
            NONE
        } else {
            self.node(id).next
        }
    }

    /// The `n`th child of `id` (0-based), or [`NONE`].
    fn nth(&self, id: u32, n: usize) -> u32 {
        if id == NONE {
            return NONE;
        }
        self.children(id).nth(n).unwrap_or(NONE)
    }
}

struct Children<'t> {
    tree: &'t Tree,
    at: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        (self.at != NONE).then(|| {
            let id = self.at;
            self.at = self.tree.node(id).next;
            id
        })
    }
}

/// What the walk does next.
enum Task {
    /// A form (code).
    Form(u32),
    /// This node and its following siblings, each a form.
    Forms(u32),
    /// This node and its following siblings, each an argument of the operator (a token)
    /// of a form without a standard shape.
    Args(u32, u32),
    /// A lambda list: the default values of its parameters are code.
    LambdaList(u32),
    /// Local functions enter (`true`) or leave scope: indices into `Walk::scopes`.
    Scope(usize, bool),
}

struct Walk<'a> {
    b: &'a [u8],
    tree: Tree,
    /// Whether a token names a symbol whose calls are wanted.
    wanted: &'a dyn Fn(&[u8]) -> bool,
    /// Local function names (folded) in scope, with how many bindings hold each.
    local: HashMap<String, usize>,
    scopes: Vec<Vec<String>>,
    tasks: Vec<Task>,
    calls: Vec<Call>,
}

/// The calls of `b[start..end]` whose operator `wanted` accepts, in source order.
/// `reads` says which `#+`/`#-` branches are read (as [`crate::scan::each_token_read`]).
pub(crate) fn calls_in(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
    wanted: &dyn Fn(&[u8]) -> bool,
) -> Vec<Call> {
    let tree = Tree::build(b, start, end, reads);
    let first = tree.node(0).first;
    let mut walk = Walk {
        b,
        tree,
        wanted,
        local: HashMap::new(),
        scopes: Vec::new(),
        tasks: vec![Task::Forms(first)],
        calls: Vec::new(),
    };
    walk.run();
    walk.calls.sort_by_key(|c| c.start);
    // A `,form` in a structural place is walked as a form, which its place may do too.
    walk.calls.dedup_by_key(|c| c.start);
    walk.calls
}

/// The folded name of a symbol token (no package, lowercase, no escapes).
pub(crate) fn token_name(token: &[u8]) -> String {
    // The common token, ASCII without a package or escapes, folded in place: every head
    // of every form walked is named (a third of a `--callers` search's cost otherwise).
    if token
        .iter()
        .all(|&b| b.is_ascii() && !matches!(b, b'|' | b'\\' | b':'))
    {
        return token
            .iter()
            .map(|&b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    super::split_symbol(&String::from_utf8_lossy(token)).1
}

/// The longest operator [`short_name`] folds without allocating.
const SHORT_NAME: usize = 32;

/// [`token_name`] of a plain token (ASCII, no package or escape, at most [`SHORT_NAME`]
/// bytes) folded into `buffer`, without allocating: every list walked names its operator.
/// `None` for another token.
fn short_name<'b>(token: &[u8], buffer: &'b mut [u8; SHORT_NAME]) -> Option<&'b str> {
    if token.len() > SHORT_NAME
        || !token
            .iter()
            .all(|&b| b.is_ascii() && !matches!(b, b'|' | b'\\' | b':'))
    {
        return None;
    }
    let folded = &mut buffer[..token.len()];
    for (to, from) in folded.iter_mut().zip(token) {
        *to = from.to_ascii_lowercase();
    }
    std::str::from_utf8(folded).ok()
}

impl Walk<'_> {
    fn run(&mut self) {
        while let Some(task) = self.tasks.pop() {
            match task {
                Task::Form(id) => self.form(id),
                Task::Forms(id) => {
                    if id != NONE {
                        self.tasks.push(Task::Forms(self.tree.next(id)));
                        self.tasks.push(Task::Form(id));
                    }
                }
                Task::Args(id, op) => {
                    if id != NONE {
                        self.tasks.push(Task::Args(self.tree.next(id), op));
                        self.argument(id, op);
                    }
                }
                Task::LambdaList(id) => self.lambda_list(id),
                Task::Scope(k, enter) => {
                    for name in &self.scopes[k] {
                        let count = self.local.entry(name.clone()).or_default();
                        if enter {
                            *count += 1;
                        } else {
                            *count = count.saturating_sub(1);
                        }
                    }
                }
            }
        }
    }

    fn text(&self, id: u32) -> &[u8] {
        let n = self.tree.node(id);
        &self.b[n.start..n.end]
    }

    fn is_token(&self, id: u32) -> bool {
        id != NONE && self.tree.node(id).kind == Kind::Token
    }

    /// Whether `id` is a list as written: not quoted, not computed by `,`.
    fn is_list(&self, id: u32) -> bool {
        id != NONE && {
            let n = self.tree.node(id);
            n.kind == Kind::List && !n.quoted && !n.unquoted
        }
    }

    /// Records a call of the token `id` unless a local function of its name shadows it.
    fn call(&mut self, id: u32, setf: bool) {
        self.call_under(id, setf, None);
    }

    /// [`Walk::call`] of the head of a list that is an argument of the operator `under`.
    fn call_under(&mut self, id: u32, setf: bool, under: Option<u32>) {
        if !self.is_token(id) || !(self.wanted)(self.text(id)) {
            return;
        }
        let text = self.text(id);
        if text.starts_with(b":") {
            return;
        }
        if !setf
            && !self.local.is_empty()
            && self.local.get(&token_name(text)).is_some_and(|&n| n > 0)
        {
            return;
        }
        let n = self.tree.node(id);
        let under = under.map(|u| (self.tree.node(u).start, self.tree.node(u).end));
        self.calls.push(Call {
            start: n.start,
            end: n.end,
            setf,
            under,
        });
    }

    /// An argument of the operator `op`, which has no standard shape: a form, whose call
    /// (if a list) is said to be under `op`.
    fn argument(&mut self, id: u32, op: u32) {
        let node = *self.tree.node(id);
        if node.kind == Kind::List && !node.quoted && !node.function {
            return self.list_under(id, Some(op));
        }
        self.form(id);
    }

    fn form(&mut self, id: u32) {
        if id == NONE {
            return;
        }
        let node = *self.tree.node(id);
        if node.quoted {
            return;
        }
        match node.kind {
            Kind::Token if node.function => self.call(id, false),
            Kind::List if node.function => self.function_name(id),
            Kind::List => self.list(id),
            _ => {}
        }
    }

    /// The argument of `#'` or `function`: a name, `(setf name)` or a lambda expression.
    fn function_name(&mut self, id: u32) {
        if self.is_token(id) {
            return self.call(id, false);
        }
        let head = self.tree.nth(id, 0);
        if !self.is_token(head) {
            return;
        }
        match token_name(self.text(head)).as_str() {
            "setf" => self.call(self.tree.nth(id, 1), true),
            "lambda" => self.lambda(self.tree.next(head)),
            _ => {}
        }
    }

    /// `ll body...` from `id` on.
    fn lambda(&mut self, ll: u32) {
        if ll == NONE {
            return;
        }
        self.tasks.push(Task::Forms(self.tree.next(ll)));
        self.tasks.push(Task::LambdaList(ll));
    }

    fn lambda_list(&mut self, id: u32) {
        if !self.is_list(id) {
            return;
        }
        let params: Vec<u32> = self.tree.children(id).collect();
        for p in params.into_iter().rev() {
            if self.is_list(p) {
                // `(x default supplied-p)`, `((:key x) default)`, `(x class)`.
                let first = self.tree.node(p).first;
                self.tasks.push(Task::Forms(self.tree.next(first)));
            }
        }
    }

    /// Each list among `id` and its following siblings: its elements after the first are
    /// code (`let` bindings, `case` clauses, slot specifications' defaults).
    fn clauses_after(&mut self, id: u32, skip: usize) {
        let clauses: Vec<u32> = std::iter::successors((id != NONE).then_some(id), |&c| {
            let n = self.tree.next(c);
            (n != NONE).then_some(n)
        })
        .collect();
        for c in clauses.into_iter().rev() {
            if self.is_list(c) && !self.tree.node(c).quoted {
                let from = self.tree.nth(c, skip);
                self.tasks.push(Task::Forms(from));
            } else if self.tree.node(c).unquoted {
                // `(let* (,@(extra-bindings)) ...)` in a template: computed, so code.
                self.tasks.push(Task::Form(c));
            }
        }
    }

    fn list(&mut self, id: u32) {
        self.list_under(id, None);
    }

    fn list_under(&mut self, id: u32, under: Option<u32>) {
        let op = self.tree.node(id).first;
        if op == NONE {
            return;
        }
        let args = self.tree.next(op);
        let op_node = *self.tree.node(op);
        if op_node.kind == Kind::List {
            // `((lambda (x) ...) arg)`, or a list that is not a call: all of it is code.
            return self.tasks.push(Task::Forms(op));
        }
        if op_node.kind != Kind::Token || op_node.quoted {
            return self.tasks.push(Task::Forms(args));
        }
        self.call_under(op, false, under);
        let b = self.b;
        let text = &b[op_node.start..op_node.end];
        let mut buffer = [0u8; SHORT_NAME];
        match short_name(text, &mut buffer) {
            Some(name) => self.shape(op, name, args),
            None => self.shape(op, &token_name(text), args),
        }
    }

    fn nth_arg(&self, args: u32, n: usize) -> u32 {
        let mut at = args;
        for _ in 0..n {
            at = self.tree.next(at);
        }
        at
    }

    /// The arguments `args` of the form whose operator is the token `op_id`, named `op`.
    fn shape(&mut self, op_id: u32, op: &str, args: u32) {
        let a1 = self.nth_arg(args, 1);
        let a2 = self.nth_arg(args, 2);
        let shape = shape(op);
        if shape != Shape::Code {
            // `(let ,bindings ...)`: what a template computes is code wherever it stands.
            let computed: Vec<u32> = self
                .tree
                .children_from(args)
                .filter(|&c| self.tree.node(c).unquoted)
                .collect();
            self.tasks.extend(computed.into_iter().map(Task::Form));
        }
        match shape {
            Shape::Code => self.tasks.push(Task::Args(args, op_id)),
            Shape::Nothing => {}
            Shape::Function => {
                if args != NONE {
                    self.function_name(args);
                }
            }
            Shape::Funcall => {
                let f = args;
                if self.is_token(f) && self.tree.node(f).quoted {
                    self.call(f, false);
                }
                self.tasks.push(Task::Forms(args));
            }
            Shape::Lambda => self.lambda(args),
            Shape::Let | Shape::BindingsThenBody => {
                self.tasks.push(Task::Forms(a1));
                if self.is_list(args) {
                    self.clauses_after(self.tree.node(args).first, 1);
                }
            }
            Shape::Flet { labels } => self.local_functions(args, labels),
            Shape::FromArg(n) => self.tasks.push(Task::Forms(self.nth_arg(args, n))),
            Shape::Clauses { keyform, skip } => {
                let clauses = if keyform {
                    self.tasks.push(Task::Form(args));
                    a1
                } else {
                    args
                };
                self.clauses_after(clauses, skip);
            }
            Shape::VarsThenBody => self.tasks.push(Task::Forms(a1)),
            Shape::WithAccessors => {
                // `(with-accessors ((var accessor)...) instance body...)`.
                self.tasks.push(Task::Forms(a1));
                let bindings: Vec<u32> = self.tree.children(args).collect();
                if self.is_list(args) {
                    for b in bindings {
                        if self.is_list(b) {
                            self.call(self.tree.nth(b, 1), false);
                        }
                    }
                }
            }
            Shape::DestructuringBind => {
                self.tasks.push(Task::Forms(a1));
                self.tasks.push(Task::LambdaList(args));
            }
            Shape::Do => {
                self.tasks.push(Task::Forms(a2));
                if self.is_list(a1) {
                    self.tasks.push(Task::Forms(self.tree.node(a1).first));
                }
                if self.is_list(args) {
                    self.clauses_after(self.tree.node(args).first, 1);
                }
            }
            Shape::With => {
                // `(with-x (var args...) body)`: `var` is bound, the rest is code.
                self.tasks.push(Task::Forms(a1));
                if self.is_list(args) {
                    let first = self.tree.node(args).first;
                    let from = if self.is_token(first) {
                        self.tree.next(first)
                    } else {
                        first
                    };
                    self.tasks.push(Task::Forms(from));
                } else {
                    self.tasks.push(Task::Form(args));
                }
            }
            Shape::Defun => self.lambda(a1),
            Shape::Defmethod => {
                let mut ll = a1;
                while ll != NONE && !self.is_list(ll) {
                    ll = self.tree.next(ll);
                }
                self.lambda(ll);
            }
            Shape::Defgeneric => {
                let options: Vec<u32> = self.tree.children_from(a2).collect();
                for o in options.into_iter().rev() {
                    let head = self.tree.nth(o, 0);
                    if self.is_list(o)
                        && self.is_token(head)
                        && token_name(self.text(head)) == "method"
                    {
                        self.shape(head, "defmethod", head);
                    }
                }
            }
            Shape::Defclass => {
                if self.is_list(a2) {
                    let first = self.tree.node(a2).first;
                    self.slot_options(first, 1);
                }
                self.class_options(self.tree.next(a2));
            }
            Shape::Defstruct => {
                let options: Vec<u32> = self.tree.children(args).skip(1).collect();
                for o in options {
                    self.structure_option(o);
                }
                let slots: Vec<u32> = self.tree.children_from(a1).collect();
                for s in slots.into_iter().rev() {
                    if self.is_list(s) {
                        self.tasks.push(Task::Form(self.tree.nth(s, 1)));
                    }
                }
            }
            Shape::Setf => {
                let items: Vec<u32> = self.tree.children_from(args).collect();
                for (k, item) in items.into_iter().enumerate().rev() {
                    if k % 2 == 0 && self.is_list(item) && !self.tree.node(item).quoted {
                        let head = self.tree.nth(item, 0);
                        if self.is_token(head) && !self.tree.node(head).quoted {
                            self.tasks.push(Task::Forms(self.tree.next(head)));
                            self.call(head, true);
                            continue;
                        }
                    }
                    self.tasks.push(Task::Form(item));
                }
            }
            Shape::Loop => self.loop_clauses(args),
        }
    }

    /// `(flet ((name ll body...)...) body...)`; `labels`: the names are in scope in the
    /// local functions' bodies too.
    fn local_functions(&mut self, bindings: u32, labels: bool) {
        let mut names = Vec::new();
        let mut defs = Vec::new();
        if self.is_list(bindings) {
            for f in self.tree.children(bindings) {
                let name = self.tree.nth(f, 0);
                if self.is_list(f) && self.is_token(name) {
                    names.push(token_name(self.text(name)));
                    defs.push(self.tree.next(name));
                }
            }
        }
        let k = self.scopes.len();
        self.scopes.push(names);
        self.tasks.push(Task::Scope(k, false));
        self.tasks.push(Task::Forms(self.tree.next(bindings)));
        if !labels {
            self.tasks.push(Task::Scope(k, true));
        }
        for d in defs.into_iter().rev() {
            self.lambda(d);
        }
        if labels {
            self.tasks.push(Task::Scope(k, true));
        }
    }

    /// A class's slot specifications from `slot` on: `:initform` values are code.
    fn slot_options(&mut self, slot: u32, _skip: usize) {
        let slots: Vec<u32> = std::iter::successors((slot != NONE).then_some(slot), |&s| {
            let n = self.tree.next(s);
            (n != NONE).then_some(n)
        })
        .collect();
        for s in slots.into_iter().rev() {
            if !self.is_list(s) {
                continue;
            }
            let items: Vec<u32> = self.tree.children(s).skip(1).collect();
            for pair in items.chunks(2) {
                if let [key, value] = pair {
                    if self.is_token(*key) && token_name(self.text(*key)) == "initform" {
                        self.tasks.push(Task::Form(*value));
                    }
                }
            }
        }
    }

    /// A `defstruct` option's code: a BOA constructor's defaults (`(:constructor make-x
    /// (a &aux (b (f a))))`), the printer the structure's `print-object` method calls
    /// (`(:print-function print-x)`, `(:print-object print-x)`, or a lambda), and the
    /// initforms of the slots an `:include` redescribes (`(:include s (in #'reader))`).
    fn structure_option(&mut self, option: u32) {
        let head = self.tree.nth(option, 0);
        if !self.is_list(option) || !self.is_token(head) {
            return;
        }
        match token_name(self.text(head)).as_str() {
            "constructor" => self.tasks.push(Task::LambdaList(self.tree.nth(option, 2))),
            "print-function" | "print-object" => {
                let printer = self.tree.next(head);
                if self.is_token(printer) {
                    self.call(printer, false);
                } else if printer != NONE {
                    self.tasks.push(Task::Form(printer));
                }
            }
            "include" => {
                let slots: Vec<u32> = self.tree.children(option).skip(2).collect();
                for s in slots.into_iter().rev() {
                    if self.is_list(s) {
                        self.tasks.push(Task::Form(self.tree.nth(s, 1)));
                    }
                }
            }
            _ => {}
        }
    }

    /// `(:default-initargs :k form ...)`, `(:report fn-or-lambda-or-string)`.
    fn class_options(&mut self, option: u32) {
        let options: Vec<u32> = std::iter::successors((option != NONE).then_some(option), |&o| {
            let n = self.tree.next(o);
            (n != NONE).then_some(n)
        })
        .collect();
        for o in options {
            let head = self.tree.nth(o, 0);
            if !self.is_list(o) || !self.is_token(head) {
                continue;
            }
            match token_name(self.text(head)).as_str() {
                "default-initargs" => {
                    let items: Vec<u32> = self.tree.children(o).skip(1).collect();
                    for pair in items.chunks(2) {
                        if let [_, value] = pair {
                            self.tasks.push(Task::Form(*value));
                        }
                    }
                }
                "report" => {
                    let what = self.tree.next(head);
                    if self.is_token(what) {
                        self.call(what, false);
                    } else {
                        self.tasks.push(Task::Form(what));
                    }
                }
                _ => {}
            }
        }
    }

    /// `loop`: lists are code, but the variables after `for`/`as`/`with`/`using` (a
    /// destructuring list such as `(a . b)`) are not.
    fn loop_clauses(&mut self, args: u32) {
        let mut binds_next = false;
        let items: Vec<u32> = self.tree.children_from(args).collect();
        let mut code = Vec::new();
        for item in items {
            if self.is_token(item) {
                let word = token_name(self.text(item));
                binds_next = matches!(word.as_str(), "for" | "as" | "with" | "and" | "using");
                continue;
            }
            if !binds_next {
                code.push(item);
            }
            binds_next = false;
        }
        for item in code.into_iter().rev() {
            self.tasks.push(Task::Form(item));
        }
    }
}

impl Tree {
    /// `id` and its following siblings.
    fn children_from(&self, id: u32) -> Children<'_> {
        Children { tree: self, at: id }
    }
}

/// How an operator's arguments are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Every argument is a form (a function call, an unknown macro).
    Code,
    /// No argument is code.
    Nothing,
    /// `(function f)`.
    Function,
    /// `(funcall 'f ...)`: a quoted symbol as the function.
    Funcall,
    /// `(lambda ll body...)`.
    Lambda,
    /// `(let ((var init)...) body...)`.
    Let,
    Flet {
        labels: bool,
    },
    /// The arguments from the `n`th on are forms.
    FromArg(usize),
    /// `case`-like: `keyform` then clauses whose elements from `skip` on are code.
    Clauses {
        keyform: bool,
        skip: usize,
    },
    /// `(handler-bind ((type handler)...) body...)`.
    BindingsThenBody,
    /// `(multiple-value-bind (vars) form body...)`: the second argument on.
    VarsThenBody,
    WithAccessors,
    DestructuringBind,
    Do,
    /// `(dolist (var list) body)`, `(with-open-file (s path) body)`, any `with-...`.
    With,
    /// `(defun name ll body...)`.
    Defun,
    Defmethod,
    Defgeneric,
    Defclass,
    Defstruct,
    Setf,
    Loop,
}

/// The shape of the operator named `op` (folded, no package): the standard special
/// operators and macros whose arguments are not all forms; any other is [`Shape::Code`].
fn shape(op: &str) -> Shape {
    match op {
        "quote"
        | "declare"
        | "declaim"
        | "go"
        | "in-package"
        | "defpackage"
        | "define-package"
        | "define-symbol-macro"
        | "deftype" => Shape::Nothing,
        "function" => Shape::Function,
        "funcall" | "apply" | "multiple-value-call" => Shape::Funcall,
        "lambda" | "named-lambda" => Shape::Lambda,
        "let" | "let*" | "prog" | "prog*" | "symbol-macrolet" => Shape::Let,
        "flet" | "macrolet" => Shape::Flet { labels: false },
        "labels" => Shape::Flet { labels: true },
        "the"
        | "block"
        | "return-from"
        | "eval-when"
        | "check-type"
        | "multiple-value-setq"
        | "defvar"
        | "defparameter"
        | "defconstant"
        | "catch" => Shape::FromArg(1),
        "case" | "ecase" | "ccase" | "typecase" | "etypecase" | "ctypecase" => Shape::Clauses {
            keyform: true,
            skip: 1,
        },
        "handler-case" | "restart-case" => Shape::Clauses {
            keyform: true,
            skip: 2,
        },
        "cond" => Shape::Clauses {
            keyform: false,
            skip: 0,
        },
        "handler-bind" | "restart-bind" => Shape::BindingsThenBody,
        "multiple-value-bind" => Shape::VarsThenBody,
        "destructuring-bind" => Shape::DestructuringBind,
        "do" | "do*" => Shape::Do,
        "dolist" | "dotimes" | "print-unreadable-object" | "pprint-logical-block" => Shape::With,
        "with-slots" => Shape::VarsThenBody,
        "with-accessors" => Shape::WithAccessors,
        "defun" | "defmacro" | "define-compiler-macro" | "define-setf-expander" => Shape::Defun,
        "defmethod" => Shape::Defmethod,
        "defgeneric" => Shape::Defgeneric,
        "defclass" | "define-condition" => Shape::Defclass,
        "defstruct" => Shape::Defstruct,
        "setf" | "psetf" => Shape::Setf,
        "loop" => Shape::Loop,
        // CFFI's and UFFI's declarations of C functions, variables and types: names and
        // C types, no code (`(defcfun "SSL_new" :pointer (ctx :pointer))` calls no `ctx`).
        "defcfun" | "defcvar" | "defcstruct" | "defcunion" | "defcenum" | "defbitfield"
        | "defctype" | "def-function" => Shape::Nothing,
        _ if op.starts_with("with-") => Shape::With,
        _ => Shape::Code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls of `text` whose name is `name`, as `(text, setf)`.
    fn calls(text: &str, name: &str) -> Vec<(String, bool)> {
        let wanted = |t: &[u8]| token_name(t) == name;
        calls_in(text.as_bytes(), 0, text.len(), &mut |_, _| true, &wanted)
            .into_iter()
            .map(|c| (text[c.start..c.end].to_string(), c.setf))
            .collect()
    }

    fn count(text: &str, name: &str) -> usize {
        calls(text, name).len()
    }

    #[test]
    fn a_list_in_the_arguments_of_an_operator_without_a_shape_is_under_it() {
        let text = "(defun f () (let-when (x (g)) (h x)) (let ((y (k))) y))";
        let all = |_: &[u8]| true;
        let found = calls_in(text.as_bytes(), 0, text.len(), &mut |_, _| true, &all);
        let under: Vec<(&str, Option<&str>)> = found
            .iter()
            .map(|c| (&text[c.start..c.end], c.under.map(|(s, e)| &text[s..e])))
            .collect();
        assert_eq!(
            under,
            [
                ("defun", None),
                ("let-when", None),
                ("x", Some("let-when")),
                ("g", Some("x")),
                ("h", Some("let-when")),
                ("let", None),
                ("k", None)
            ]
        );
    }

    #[test]
    fn operator_position_function_and_quoted_funcall_are_calls() {
        assert_eq!(count("(defun a () (foo 1) (FOO))", "foo"), 2);
        assert_eq!(
            count("(defun a () (mapcar #'foo x) (function foo))", "foo"),
            2
        );
        assert_eq!(
            count("(defun a () (funcall 'foo 1) (apply 'foo x))", "foo"),
            2
        );
        assert_eq!(count("(defun a () (pkg::foo 1))", "foo"), 1);
        assert_eq!(calls("(setf (foo x) 1)", "foo"), [("foo".into(), true)]);
        assert_eq!(count("(defun a () #'(setf foo))", "foo"), 1);
    }

    #[test]
    fn data_variables_strings_and_comments_are_not_calls() {
        assert_eq!(
            count(
                "(defun a (foo) (list foo '(foo 1) \"(foo)\") ; (foo)\n)",
                "foo"
            ),
            0
        );
        assert_eq!(
            count("(defun a () (let ((foo (bar))) (+ foo 1)))", "foo"),
            0
        );
        assert_eq!(count("(defun a () (case x ((foo) 1) (foo 2)))", "foo"), 0);
        assert_eq!(count("(defun a () (mapcar 'foo x) #(foo))", "foo"), 0);
        assert_eq!(count("(defun a (&optional (x (foo))) x)", "foo"), 1);
        assert_eq!(
            count(
                "(defun a () (multiple-value-bind (foo b) (foo) foo))",
                "foo"
            ),
            1
        );
        assert_eq!(count("(defun a () (dolist (foo (foo)) foo))", "foo"), 1);
        assert_eq!(
            count("(defun a () (loop for (foo b) in x do (foo)))", "foo"),
            1
        );
    }

    #[test]
    fn a_structures_printer_and_included_slots_initforms_are_calls() {
        // closure-common's xstream, swank's connection: the `print-object` method the
        // structure defines calls its printer.
        let printer = "(defstruct (x (:copier nil) (:print-function print-x)) a)";
        assert_eq!(count(printer, "print-x"), 1);
        assert_eq!(count("(defstruct (x (:print-object pr)) a)", "pr"), 1);
        let lambda = "(defstruct (x (:print-object (lambda (o s) (pr o s)))) a)";
        assert_eq!(count(lambda, "pr"), 1);
        // kmrcl's byte-array-input-stream: the slots an `:include` redescribes.
        let include = "(defstruct (y (:include x (in #'inch) (b (f)) c)) (d (g)))";
        assert_eq!(count(include, "inch"), 1);
        assert_eq!(count(include, "f"), 1);
        assert_eq!(count(include, "g"), 1);
        // The included structure's name and the options' other words are no calls.
        assert_eq!(count(include, "x"), 0);
        assert_eq!(
            count(
                "(defstruct (x (:conc-name foo-) (:predicate foo)) a)",
                "foo"
            ),
            0
        );
        assert_eq!(
            count("(defstruct (x (:print-function)) a)", "print-function"),
            0
        );
    }

    #[test]
    fn cffi_declarations_hold_no_calls() {
        let defcfun = "(defcfun \"SSL_new\" :pointer (ctx :pointer))";
        assert_eq!(count(defcfun, "ctx"), 0);
        let defcstruct = "(cffi:defcstruct settings (host :char :count 119))";
        assert_eq!(count(defcstruct, "host"), 0);
        let def_function = "(uffi:def-function \"atoi\" ((str (* :char))) :returning :int)";
        assert_eq!(count(def_function, "str"), 0);
        assert_eq!(count("(defun a () (ctx 1))", "ctx"), 1);
    }

    #[test]
    fn local_functions_shadow_the_global_one_in_their_scope() {
        assert_eq!(count("(defun a () (flet ((foo () 1)) (foo)))", "foo"), 0);
        // flet: the local function's own body calls the global one.
        assert_eq!(
            count("(defun a () (flet ((foo () (foo))) (foo)))", "foo"),
            1
        );
        assert_eq!(
            count("(defun a () (labels ((foo () (foo))) (foo)))", "foo"),
            0
        );
        assert_eq!(
            count("(defun a () (labels ((foo () 1)) #'foo) (foo))", "foo"),
            1
        );
        assert_eq!(
            count("(defun a () (macrolet ((foo () 1)) (foo)) (foo))", "foo"),
            1
        );
    }

    #[test]
    fn a_templates_computed_bindings_are_code() {
        // cl-ppcre's do-scans: `,@` in a binding list computes bindings, whose nested
        // template holds a call.
        let src = "(defmacro m (r) `(let* (,@(unless (c r) `((x (typecase x (t (foo x))))))) x))";
        assert_eq!(count(src, "foo"), 1);
        assert_eq!(count(src, "c"), 1);
        // A binding written as data is still no call.
        assert_eq!(count("(defun a () (let ((foo 1)) foo))", "foo"), 0);
    }

    #[test]
    fn hostile_nesting_is_walked_without_recursion() {
        let deep = format!("{}foo{}", "(".repeat(200_000), ")".repeat(200_000));
        assert_eq!(count(&deep, "foo"), 1);
        let deep_let = format!(
            "{}(foo){}",
            "(let ((x 1)) ".repeat(50_000),
            ")".repeat(50_000)
        );
        assert_eq!(count(&deep_let, "foo"), 1);
    }
}
