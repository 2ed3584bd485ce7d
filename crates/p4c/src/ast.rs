//! The syntax tree the parser builds: declarations, statements, expressions, each with its place.

use crate::diag::Loc;

#[derive(Debug, Clone)]
pub struct Annotation {
    pub name: String,
    /// The annotation's body as text (string literals unquoted), e.g. `packet_in` or `0x1`.
    pub body: String,
    pub loc: Loc,
}

pub fn annotation<'a>(anns: &'a [Annotation], name: &str) -> Option<&'a Annotation> {
    anns.iter().find(|a| a.name == name)
}

#[derive(Debug, Clone)]
pub enum Type {
    Bit(Box<Expr>),
    Int(Box<Expr>),
    Varbit(Box<Expr>),
    Bool,
    Void,
    Error,
    Str,
    /// `_` in a type position.
    DontCare,
    /// A name, with type arguments when given (`register<bit<32>>`).
    Named(String, Vec<Type>, Loc),
    /// `T[n]`.
    Stack(Box<Type>, Box<Expr>),
    /// `tuple<...>` / `list<...>`.
    Tuple(Vec<Type>),
    /// `int`: an integer without width (compile-time constants only).
    UnsizedInt,
    /// The type of a temporary the compiler introduces: that of its initialiser.
    Infer,
}

#[derive(Debug, Clone)]
pub struct Field {
    pub ty: Type,
    pub name: String,
    pub loc: Loc,
    /// `@field_list(...)` and the like.
    pub annotations: Vec<Annotation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    None,
    In,
    Out,
    InOut,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub dir: Dir,
    pub ty: Type,
    pub name: String,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub enum Decl {
    Const {
        ty: Type,
        name: String,
        value: Expr,
        loc: Loc,
    },
    /// `typedef` (`new_type` false) or `type` (a new type: P4Info names it).
    Typedef {
        name: String,
        ty: Type,
        loc: Loc,
        new_type: bool,
        annotations: Vec<Annotation>,
    },
    Header {
        name: String,
        fields: Vec<Field>,
        loc: Loc,
        annotations: Vec<Annotation>,
    },
    HeaderUnion {
        name: String,
        fields: Vec<Field>,
        loc: Loc,
    },
    Struct {
        name: String,
        fields: Vec<Field>,
        loc: Loc,
    },
    Enum {
        name: String,
        repr: Option<Type>,
        members: Vec<(String, Option<Expr>, Loc)>,
        loc: Loc,
    },
    Error {
        members: Vec<(String, Loc)>,
    },
    MatchKind {
        members: Vec<(String, Loc)>,
    },
    /// `extern` object or function; only names and method arities are kept.
    Extern {
        name: String,
        methods: Vec<(String, usize)>,
        is_function: bool,
    },
    Parser(Box<ParserDecl>),
    Control(Box<ControlDecl>),
    Action(ActionDecl),
    /// A function (`bit<8> max(in bit<8> a, in bit<8> b) { ... }`), inlined where it is called.
    Function(FunctionDecl),
    Instance(Instance),
    /// Parser / control / package type declarations: nothing to lower.
    Signature,
    ValueSet {
        loc: Loc,
    },
}

#[derive(Debug, Clone)]
pub struct Instance {
    pub ty: Type,
    pub args: Vec<Expr>,
    pub name: String,
    pub loc: Loc,
    pub annotations: Vec<Annotation>,
}

#[derive(Debug, Clone)]
pub struct ParserDecl {
    pub name: String,
    pub params: Vec<Param>,
    pub locals: Vec<Local>,
    pub states: Vec<State>,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub struct State {
    pub name: String,
    pub body: Vec<Stmt>,
    pub transition: Transition,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub enum Transition {
    Goto(String, Loc),
    Select {
        keys: Vec<Expr>,
        cases: Vec<SelectCase>,
        loc: Loc,
    },
}

#[derive(Debug, Clone)]
pub struct SelectCase {
    /// One entry per key (a tuple `(a, b)` is split); `Expr::Default` for `default` / `_`.
    pub values: Vec<Expr>,
    pub next: String,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub enum Local {
    Action(ActionDecl),
    Table(TableDecl),
    Instance(Instance),
    Var {
        ty: Type,
        name: String,
        init: Option<Expr>,
        loc: Loc,
    },
    Const {
        ty: Type,
        name: String,
        value: Expr,
        loc: Loc,
    },
}

#[derive(Debug, Clone)]
pub struct ControlDecl {
    pub name: String,
    pub params: Vec<Param>,
    /// Constructor parameters (`control C(inout H h)(my_ctl_t c)`), bound where it is
    /// instantiated (`ctor_args`).
    pub ctor_params: Vec<Param>,
    pub locals: Vec<Local>,
    pub apply: Vec<Stmt>,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub struct ActionDecl {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub loc: Loc,
    pub annotations: Vec<Annotation>,
}

#[derive(Debug, Clone)]
pub struct FunctionDecl {
    pub ret: Type,
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub struct KeyElem {
    pub expr: Expr,
    pub match_kind: String,
    pub loc: Loc,
    pub annotations: Vec<Annotation>,
}

#[derive(Debug, Clone)]
pub struct ActionRef {
    pub name: String,
    pub args: Vec<Expr>,
    pub loc: Loc,
    pub annotations: Vec<Annotation>,
}

#[derive(Debug, Clone)]
pub struct ConstEntry {
    pub keys: Vec<Expr>,
    pub action: ActionRef,
    pub priority: Option<Expr>,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub struct TableDecl {
    pub name: String,
    pub keys: Vec<KeyElem>,
    pub actions: Vec<ActionRef>,
    pub default_action: Option<(ActionRef, bool)>,
    pub entries: Option<Vec<ConstEntry>>,
    pub size: Option<Expr>,
    /// Other properties (counters, meters, implementation, ...): name and value.
    pub props: Vec<(String, Expr, Loc)>,
    pub loc: Loc,
    pub annotations: Vec<Annotation>,
    /// Annotations of the `implementation` property (`@name("ap") implementation = ...`).
    pub impl_annotations: Vec<Annotation>,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Assign(Expr, Expr, Loc),
    Call(Expr, Loc),
    If(Expr, Vec<Stmt>, Vec<Stmt>, Loc),
    Block(Vec<Stmt>),
    Switch(Expr, Vec<SwitchCase>, Loc),
    Var {
        ty: Type,
        name: String,
        init: Option<Expr>,
        loc: Loc,
    },
    Const {
        ty: Type,
        name: String,
        value: Expr,
        loc: Loc,
    },
    Exit(Loc),
    Return(Loc),
    /// `return e;` (functions only; replaced when the function is inlined).
    ReturnValue(Expr, Loc),
    /// `for (init; cond; step) body`.
    For(Box<ForStmt>),
    Break(Loc),
    Continue(Loc),
    Empty,
}

#[derive(Debug, Clone)]
pub struct ForStmt {
    pub init: Vec<Stmt>,
    /// None when left out (`for (;;)`): always true.
    pub cond: Option<Expr>,
    pub step: Vec<Stmt>,
    pub body: Vec<Stmt>,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub struct SwitchCase {
    /// Action names (or `default`), several labels falling through to one body.
    pub labels: Vec<(String, Loc)>,
    /// The labels as values (`switch` on a value); None for `default`.
    pub values: Vec<Option<Expr>>,
    pub body: Option<Vec<Stmt>>,
}

#[derive(Debug, Clone)]
pub enum Expr {
    Int {
        value: u128,
        width: Option<(bool, u32)>,
        loc: Loc,
    },
    Bool(bool, Loc),
    Str(String, Loc),
    Name(String, Loc),
    Member(Box<Expr>, String, Loc),
    Index(Box<Expr>, Box<Expr>, Loc),
    Slice(Box<Expr>, Box<Expr>, Box<Expr>, Loc),
    Call {
        func: Box<Expr>,
        type_args: Vec<Type>,
        args: Vec<Expr>,
        loc: Loc,
    },
    Unary(&'static str, Box<Expr>, Loc),
    Binary(&'static str, Box<Expr>, Box<Expr>, Loc),
    Cast(Type, Box<Expr>, Loc),
    Mux(Box<Expr>, Box<Expr>, Box<Expr>, Loc),
    List(Vec<Expr>, Loc),
    /// `a &&& b`
    Mask(Box<Expr>, Box<Expr>, Loc),
    /// `a .. b`
    Range(Box<Expr>, Box<Expr>, Loc),
    /// `default` or `_` as a value.
    Default(Loc),
}

impl Expr {
    pub fn loc(&self) -> Loc {
        match self {
            Expr::Int { loc, .. }
            | Expr::Bool(_, loc)
            | Expr::Str(_, loc)
            | Expr::Name(_, loc)
            | Expr::Member(_, _, loc)
            | Expr::Index(_, _, loc)
            | Expr::Slice(_, _, _, loc)
            | Expr::Call { loc, .. }
            | Expr::Unary(_, _, loc)
            | Expr::Binary(_, _, _, loc)
            | Expr::Cast(_, _, loc)
            | Expr::Mux(_, _, _, loc)
            | Expr::List(_, loc)
            | Expr::Mask(_, _, loc)
            | Expr::Range(_, _, loc)
            | Expr::Default(loc) => *loc,
        }
    }

    /// Where the whole expression starts (its leftmost token).
    pub fn start(&self) -> Loc {
        match self {
            Expr::Member(b, _, _) | Expr::Index(b, _, _) | Expr::Slice(b, _, _, _) => b.start(),
            Expr::Call { func, .. } => func.start(),
            Expr::Binary(_, a, _, _) | Expr::Mask(a, _, _) | Expr::Range(a, _, _) => a.start(),
            Expr::Mux(c, _, _, _) => c.start(),
            e => e.loc(),
        }
    }

    /// `a.b.c` as text, for names in P4Info and messages.
    pub fn path(&self) -> Option<String> {
        match self {
            Expr::Name(n, _) => Some(n.clone()),
            Expr::Member(b, n, _) => Some(format!("{}.{n}", b.path()?)),
            Expr::Index(b, i, _) => match &**i {
                Expr::Int { value, .. } => Some(format!("{}[{value}]", b.path()?)),
                _ => None,
            },
            _ => None,
        }
    }
}
